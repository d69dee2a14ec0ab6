package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by `make build` (-ldflags "-X main.version=… -X main.commit=…
// -X main.buildDate=…"); empty in other builds, which fall back to what the
// Go toolchain stamped into the binary (module version, VCS revision and
// commit time).
var version, commit, buildDate string

// buildIdentity is what `cms version` prints.
type buildIdentity struct {
	Version, Commit, Date string
	Modified              bool // built from a working tree with changes
}

// identify reads the toolchain's build information bi (nil when absent)
// and applies the -ldflags overrides.
func identify(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) buildIdentity {
	id := buildIdentity{Version: "devel", Commit: "unknown", Date: "unknown"}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			id.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				id.Commit = s.Value
			case "vcs.time":
				id.Date = s.Value
			case "vcs.modified":
				id.Modified = s.Value == "true"
			}
		}
	}
	for dst, src := range map[*string]string{&id.Version: ldVersion, &id.Commit: ldCommit, &id.Date: ldDate} {
		if src != "" {
			*dst = src
		}
	}
	return id
}

func (id buildIdentity) String() string {
	c := id.Commit
	if id.Modified {
		c += " (modified)"
	}
	return fmt.Sprintf("cms %s\ncommit %s\nbuilt %s", id.Version, c, id.Date)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			bi, _ := debug.ReadBuildInfo()
			fmt.Fprintln(cmd.OutOrStdout(), identify(bi, version, commit, buildDate))
		},
	}
}
