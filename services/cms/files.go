package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/services/internal/app"
)

const filesCleanupLong = `Remove stored files no binary proxy object references.

A file is referenced when an object on any branch, live or deleted (it can be
restored), names its hash in attribute 11000 (externalBinaryMD5). Files stored
less than --min-age ago are kept even when unreferenced: a client uploads a
file before it creates the object naming it. Thumbnails of removed files go
with them, and abandoned temporary uploads (older than files.uploadTtl) are
removed too. --dry-run reports and removes nothing. The job kind
jobCleanupFiles runs the same code (parameters minAge and dryRun).

The components come from the same configuration as "cms run" (embedded:
SQLite, embedded NATS and the file-system blob store in --data-dir; stop the
server first, it holds the embedded NATS storage) or, with --distributed,
"cms serve" (PostgreSQL and the NATS object store; the services may keep
running).

Progress (files examined) goes to stderr.`

func newFilesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "files", Short: "Maintain the stored files"}
	cleanup := &cobra.Command{
		Use:   "cleanup [--dry-run] [--min-age 24h]",
		Short: "Remove stored files no binary proxy object references",
		Long:  filesCleanupLong,
		Args:  cobra.NoArgs,
		RunE:  runFilesCleanup,
	}
	bindFlags(cleanup, app.DefaultConfig(), false)
	cleanup.Flags().Bool("distributed", false, "use the distributed defaults of \"cms serve\" (PostgreSQL, NATS object store)")
	cleanup.Flags().Bool("dry-run", false, "report what would be removed, remove nothing")
	cleanup.Flags().Duration("min-age", files.DefaultCleanupMinAge, "keep unreferenced files stored less than this long ago")
	cmd.AddCommand(cleanup)
	return cmd
}

func runFilesCleanup(cmd *cobra.Command, _ []string) error {
	cfg, err := oneOffConfig(cmd)
	if err != nil {
		return err
	}
	o := files.CleanupOptions{}
	o.DryRun, _ = cmd.Flags().GetBool("dry-run")
	o.MinAge, _ = cmd.Flags().GetDuration("min-age")
	// The Management target has exactly the store and the blob component
	// (and the events connection the NATS object store lives on).
	cfg.Target = app.TargetManagement
	log := newLogger(cfg)
	ctx := cmd.Context()
	comps, err := app.OpenComponents(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer comps.Close()
	svc := app.NewFiles(cfg, comps, log)
	if svc == nil {
		return fmt.Errorf("files cleanup: no blob component configured")
	}
	bar := newProgressBar(cmd.ErrOrStderr(), "files")
	bar.unit = "files"
	var last indexwriter.Progress
	o.Progress = func(done, total int64) {
		last = indexwriter.Progress{Done: done, Total: total}
		bar.update(last, false)
	}
	start := time.Now()
	res, err := svc.Cleanup(ctx, func(ctx context.Context) (map[[16]byte]bool, error) { return files.References(ctx, comps.Store) }, o)
	bar.update(last, true)
	if err != nil {
		return fmt.Errorf("files cleanup: %w", err)
	}
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%d files in %s: %d referenced, %d younger than %s; %s %d unreferenced (%d bytes); %d abandoned uploads removed\n",
		res.Files, time.Since(start).Round(time.Millisecond), res.Referenced, res.Young, o.MinAge, verb, res.Removed, res.RemovedBytes, res.Uploads)
	return nil
}
