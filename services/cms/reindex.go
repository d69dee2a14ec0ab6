package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/app"
)

const reindexLong = `Rebuild the objects search index from the store.

Without --branch, every branch is indexed into a new index (objects-<unix ms>);
when it is complete the "objects" alias is switched to it in one atomic step
and the old index is deleted, so readers never see a missing or partial index.
A running indexer keeps applying changes meanwhile: it also writes them into
the new index while the rebuild runs (see pkg/indexwriter/reindex.go), so nothing
written during the rebuild is lost. Run one reindex at a time.

With --branch X, branch X and its descendants are reindexed in place, in the
live index, and their documents of objects the store no longer has are removed.

The components come from the same configuration as "cms run" (embedded:
SQLite and Bleve in --data-dir) or, with --distributed, "cms serve"
(PostgreSQL and Elasticsearch from CMS_POSTGRES_URL / CMS_ELASTICSEARCH_URL,
config file or CMS_STORE_URL / CMS_SEARCH_URL).

In embedded mode the data dir must NOT be in use by a running "cms run": Bleve
locks its index files, so stop the server first (the reindex then waits for
or fails on the lock). Against Elasticsearch the services may keep running.

Progress (documents done/total, rate, ETA) goes to stderr: redrawn in place
on a terminal, a plain line every few seconds otherwise.`

func newReindexCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reindex [--branch X]",
		Short: "Rebuild the search index from the store and switch the alias with no downtime",
		Long:  reindexLong,
		Args:  cobra.NoArgs,
	}
	bindFlags(cmd, app.DefaultConfig(), false)
	cmd.Flags().Bool("distributed", false, "use the distributed defaults of \"cms serve\" (PostgreSQL, Elasticsearch)")
	cmd.Flags().String("branch", "", "reindex only this branch id and its descendants, in place")
	cmd.RunE = runReindex
	return cmd
}

// oneOffConfig is the configuration of a one-off command (reindex, files
// cleanup): flags and environment over the defaults of `cms run`, or with
// --distributed those of `cms serve`.
func oneOffConfig(cmd *cobra.Command) (app.Config, error) {
	def := app.DefaultConfig()
	if d, _ := cmd.Flags().GetBool("distributed"); d {
		def = app.DistributedConfig()
	}
	return loadConfig(cmd, def)
}

func runReindex(cmd *cobra.Command, _ []string) error {
	cfg, err := oneOffConfig(cmd)
	if err != nil {
		return err
	}
	var branch int64
	if s, _ := cmd.Flags().GetString("branch"); s != "" {
		if branch, err = strconv.ParseInt(s, 10, 64); err != nil || branch < 1 {
			return fmt.Errorf("--branch %q: want a branch id", s)
		}
	}
	// The Index target needs exactly the store and the search engine.
	cfg.Target = app.TargetIndex
	log := newLogger(cfg)
	ctx := cmd.Context()
	comps, err := app.OpenComponents(ctx, cfg, log)
	if err != nil {
		return err
	}
	if cfg.Search.Engine == app.EngineBleve {
		if err := probeUnlocked(ctx, comps.Search, bleveLockWait, cfg.DataDir); err != nil {
			// Not closed: the engine's lock is held by the probe still
			// waiting for the index files; the process is about to exit.
			return err
		}
	}
	defer comps.Close()
	// These options must equal the services' (services/internal/app
	// Config.indexing): today the defaults.
	ix, err := indexwriter.New(comps.Store, comps.Search, indexwriter.Options{Logger: log.With("component", "indexing")})
	if err != nil {
		return err
	}
	bar := newProgressBar(cmd.ErrOrStderr(), "reindex")
	var last indexwriter.Progress
	progress := func(p indexwriter.Progress) { last = p; bar.update(p, false) }
	start := time.Now()
	var res indexwriter.RebuildResult
	if branch > 0 {
		res, err = ix.RebuildBranch(ctx, branch, comps.Store.LastTransactionID, progress)
	} else {
		res, err = ix.Rebuild(ctx, comps.Store.LastTransactionID, progress)
	}
	bar.update(last, true)
	if err != nil {
		if errors.Is(err, indexwriter.ErrNoAliases) {
			return fmt.Errorf("reindex: %w (search engine %s)", err, cfg.Search.Engine)
		}
		return fmt.Errorf("reindex: %w", err)
	}
	out := cmd.OutOrStdout()
	if branch > 0 {
		fmt.Fprintf(out, "reindexed branch %d and %d descendants in %s: %d documents at version %d\n",
			branch, res.Branches-1, time.Since(start).Round(time.Millisecond), res.Documents, res.Version)
		return nil
	}
	fmt.Fprintf(out, "reindexed %d branches into %s in %s: %d documents at version %d; alias %s switched",
		res.Branches, res.Index, time.Since(start).Round(time.Millisecond), res.Documents, res.Version, ix.ObjectsIndex())
	if res.Previous != "" {
		fmt.Fprintf(out, ", %s deleted", res.Previous)
	}
	fmt.Fprintln(out)
	return nil
}

// bleveLockWait bounds opening the embedded index: Bleve waits for its
// file lock without a timeout, so a running "cms run" would hang us.
const bleveLockWait = 3 * time.Second

// probeUnlocked opens the objects index (if any) and fails when that does
// not finish within wait: its files are locked by another process.
func probeUnlocked(ctx context.Context, eng search.Engine, wait time.Duration, dataDir string) error {
	done := make(chan error, 1)
	go func() { // left blocked on the lock if it is held; the process exits
		_, err := eng.Count(ctx, indexdoc.ObjectsIndex, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, search.ErrIndexNotFound) {
			return fmt.Errorf("reindex: open search index: %w", err)
		}
		return nil
	case <-time.After(wait):
		return fmt.Errorf("reindex: the search index in %s is locked by another process: stop the running \"cms run\" first", dataDir)
	}
}
