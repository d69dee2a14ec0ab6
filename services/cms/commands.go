package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/cmsplatform/cms/pkg/memlimit"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "cms",
		Short:         "A content platform speaking the NovaDB interfaces",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newServeCommand(), newReindexCommand(), newIndexerCommand(), newLoadCommand(), newVersionCommand(), newFilesCommand(), newDoctorCommand(), newBranchCommand())
	return root
}

func newRunCommand() *cobra.Command {
	return newServingCommand("run", "Run every service in one process on embedded components (SQLite, NATS, Bleve, memory cache)",
		app.DefaultConfig, false)
}

func newServeCommand() *cobra.Command {
	return newServingCommand("serve", "Run one service (or all) against PostgreSQL, NATS, Elasticsearch and Redis",
		app.DistributedConfig, true)
}

// newServingCommand is a command that serves with the configuration
// defaults returns, overridden by the file, the environment and the flags
// (loadConfig); withTarget adds the --target flag.
func newServingCommand(use, short string, defaults func() app.Config, withTarget bool) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	bindFlags(cmd, defaults(), withTarget)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := loadConfig(cmd, defaults())
		if err != nil {
			return err
		}
		return serve(cmd, cfg)
	}
	return cmd
}

func serve(cmd *cobra.Command, cfg app.Config) error {
	log := newLogger(cfg)
	// The memory limit: memoryLimit, else GOMEMLIMIT, else 90% of the
	// container's cgroup memory limit, else memlimit.DefaultLimit; the Go
	// heap's soft limit and the budget of the caches (pkg/memlimit).
	l, err := memlimit.Set(cfg.MemoryLimit)
	if err != nil {
		log.Warn("cannot read the cgroup memory limit; planning for the default", "err", err, "bytes", l.Bytes)
	}
	log.Info("memory limit", "bytes", l.Bytes, "source", l.Source, "goSoftLimit", l.Heap)
	cfg.MemoryLimit = l.Bytes
	if cfg.AdminPassword == app.DefaultAdminPassword {
		log.Warn("the administrator uses the default password; set CMS_ADMIN_PASSWORD outside a laptop")
	}
	srv, err := app.Complete(cmd.Context(), cfg, log)
	if err != nil {
		return err
	}
	return srv.Run(cmd.Context())
}

func newLogger(cfg app.Config) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(tracing.LogHandler(slog.NewJSONHandler(os.Stderr, opts)))
	}
	return slog.New(tracing.LogHandler(slog.NewTextHandler(os.Stderr, opts)))
}

// bindFlags declares the flags with defaults from def.
func bindFlags(cmd *cobra.Command, def app.Config, withTarget bool) {
	f := cmd.Flags()
	f.String("config", "", "optional YAML config file")
	if withTarget {
		f.String("target", def.Target, "service to run: all, "+strings.Join(app.AllTargets, ", "))
	}
	f.String("http-addr", def.HTTPAddr, "HTTP listen address (every base path, /metrics, /healthz, /readyz)")
	f.String("grpc-addr", def.GRPCAddr, "gRPC listen address")
	f.String("data-dir", def.DataDir, "directory for embedded data (SQLite, NATS, Bleve, blobs)")
	f.String("log-level", def.LogLevel, "debug, info, warn or error")
	f.String("log-format", def.LogFormat, "text or json")
}

// loadConfig layers defaults < YAML file < CMS_* env < flags.
func loadConfig(cmd *cobra.Command, def app.Config) (app.Config, error) {
	v := viper.New()
	setDefaults(v, def)
	if path, _ := cmd.Flags().GetString("config"); path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return def, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	flagKeys := map[string]string{"target": "target", "http-addr": "httpAddr", "grpc-addr": "grpcAddr",
		"data-dir": "dataDir", "log-level": "logLevel", "log-format": "logFormat"}
	var bindErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if key, ok := flagKeys[fl.Name]; ok && fl.Changed {
			if err := v.BindPFlag(key, fl); err != nil {
				bindErr = err
			}
		}
	})
	if bindErr != nil {
		return def, bindErr
	}
	return fromViper(v, def)
}
