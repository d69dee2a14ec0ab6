package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/services/internal/app"
)

const indexerLong = `Inspect and retry the change events the indexer parked.

The indexer parks a change event only when it fails deterministically on a
healthy search engine (an unreachable or slow component never parks: the
indexer waits for it). Parked events are kept in the search engine (the
indexer-parked index beside the objects index), so every process sees the
same list; read-your-writes for a version that includes a parked transaction
answers 503 naming it. The indexer retries them by itself when it starts and
when a component it waited for recovers.

The components come from the same configuration as "cms run" (embedded:
SQLite and Bleve in --data-dir; stop "cms run" first, Bleve locks its files)
or, with --distributed, "cms serve" (PostgreSQL and Elasticsearch from
CMS_POSTGRES_URL / CMS_ELASTICSEARCH_URL); against Elasticsearch the
services may keep running.`

func newIndexerCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "indexer", Short: "List and retry the indexer's parked change events", Long: indexerLong}
	parked := &cobra.Command{Use: "parked", Short: "List the parked change events, oldest transaction first",
		Long: indexerLong, Args: cobra.NoArgs, RunE: runIndexerParked}
	retry := &cobra.Command{Use: "retry [--tx N]", Short: "Apply the parked change events again; those that apply leave the list",
		Long: indexerLong, Args: cobra.NoArgs, RunE: runIndexerRetry}
	retry.Flags().Int64("tx", 0, "retry only the parked events of this transaction")
	for _, c := range []*cobra.Command{parked, retry} {
		bindFlags(c, app.DefaultConfig(), false)
		c.Flags().Bool("distributed", false, "use the distributed defaults of \"cms serve\" (PostgreSQL, Elasticsearch)")
	}
	cmd.AddCommand(parked, retry)
	return cmd
}

// openIndexer opens the store and the search engine of the one-off
// configuration and an indexer on them; close releases them.
func openIndexer(cmd *cobra.Command) (ix *indexwriter.Indexer, closeFn func(), err error) {
	cfg, err := oneOffConfig(cmd)
	if err != nil {
		return nil, nil, err
	}
	cfg.Target = app.TargetIndex // the store and the search engine
	log := newLogger(cfg)
	ctx := cmd.Context()
	comps, err := app.OpenComponents(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Search.Engine == app.EngineBleve {
		if err := probeUnlocked(ctx, comps.Search, bleveLockWait, cfg.DataDir); err != nil {
			return nil, nil, err // not closed: see runReindex
		}
	}
	// The same options as the services' and `cms reindex`: the defaults.
	ix, err = indexwriter.New(comps.Store, comps.Search, indexwriter.Options{Logger: log.With("component", "indexing")})
	if err != nil {
		comps.Close()
		return nil, nil, err
	}
	return ix, comps.Close, nil
}

func runIndexerParked(cmd *cobra.Command, _ []string) error {
	ix, closeFn, err := openIndexer(cmd)
	if err != nil {
		return err
	}
	defer closeFn()
	list, total, err := ix.Parked(cmd.Context())
	if err != nil {
		return fmt.Errorf("indexer parked: %w", err)
	}
	out := cmd.OutOrStdout()
	if total == 0 {
		fmt.Fprintln(out, "no parked change events")
		return nil
	}
	fmt.Fprintf(out, "%d parked change events", total)
	if int64(len(list)) < total {
		fmt.Fprintf(out, " (the oldest %d shown)", len(list))
	}
	fmt.Fprintln(out)
	for _, p := range list {
		fmt.Fprintf(out, "tx %d\tseq %d\tsubject %s\tmsgId %s\tdeliveries %d\tparked %s\terror: %s\n",
			p.Transaction, p.Sequence, p.Subject, p.MsgID, p.Deliveries, p.At.UTC().Format(time.RFC3339), p.Err)
	}
	return nil
}

func runIndexerRetry(cmd *cobra.Command, _ []string) error {
	tx, _ := cmd.Flags().GetInt64("tx")
	if tx < 0 {
		return fmt.Errorf("--tx %d: want a transaction id", tx)
	}
	ix, closeFn, err := openIndexer(cmd)
	if err != nil {
		return err
	}
	defer closeFn()
	res, err := ix.RetryParked(cmd.Context(), tx)
	out := cmd.OutOrStdout()
	for _, p := range res.Applied {
		fmt.Fprintf(out, "applied tx %d (seq %d)\n", p.Transaction, p.Sequence)
	}
	for _, p := range res.Failed {
		fmt.Fprintf(out, "still parked tx %d (seq %d): %s\n", p.Transaction, p.Sequence, p.Err)
	}
	if err != nil {
		return fmt.Errorf("indexer retry: %w", err)
	}
	if len(res.Applied)+len(res.Failed) == 0 {
		if tx > 0 {
			return fmt.Errorf("indexer retry: transaction %s is not parked", strconv.FormatInt(tx, 10))
		}
		fmt.Fprintln(out, "no parked change events")
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("indexer retry: %d events still parked", len(res.Failed))
	}
	return nil
}
