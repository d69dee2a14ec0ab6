package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/doctor"
	"github.com/cmsplatform/cms/services/internal/app"
)

const doctorLong = `Check an installation and print one verdict per line, with the fix.

Reads the same configuration as "cms serve" (the config file, CMS_*
variables and flags; --embedded for the one of "cms run") and checks,
without changing anything: the risky settings (the default administrator
password, CORS for every origin, webhooks to private addresses, renders on
the API's origin, bearer tokens without a key); each component - reachable,
version, and what it holds: the store's migrations, the JetStream streams
and their durable consumers, the search index's alias and mapping, Redis's
memory policy, the blob bucket; the indexer's lag and parked events; and
the clocks of PostgreSQL and Redis against this machine's.

Exit code: 0 when every line is ok, 1 when some line is a warning, 2 when
some check failed (the convention of monitoring plugins).`

func newDoctorCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "doctor", Short: "Check the components, the settings and the indexer of an installation",
		Long: doctorLong, Args: cobra.NoArgs, SilenceUsage: true}
	bindFlags(cmd, app.DistributedConfig(), false)
	cmd.Flags().Bool("embedded", false, "check the configuration of \"cms run\" (SQLite, embedded NATS, Bleve) instead of \"cms serve\"")
	cmd.Flags().Duration("check-timeout", 10*time.Second, "how long each check may take")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		def := app.DistributedConfig()
		if e, _ := cmd.Flags().GetBool("embedded"); e {
			def = app.DefaultConfig()
		}
		cfg, err := loadConfig(cmd, def)
		if err != nil {
			return err
		}
		timeout, _ := cmd.Flags().GetDuration("check-timeout")
		lines := doctor.Run(cmd.Context(), app.DoctorChecks(cfg), timeout)
		if err := doctor.Print(cmd.OutOrStdout(), lines); err != nil {
			return err
		}
		if code := doctor.ExitCode(lines); code != 0 {
			return exitCode(code)
		}
		return nil
	}
	return cmd
}
