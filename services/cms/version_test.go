package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionNamesCommitAndDate(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-25T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name               string
		bi                 *debug.BuildInfo
		ldV, ldC, ldD, out string
	}{
		{"no build information", nil, "", "", "", "cms devel\ncommit unknown\nbuilt unknown"},
		{"toolchain stamp", stamped, "", "", "", "cms devel\ncommit 0123abcd (modified)\nbuilt 2026-11-25T10:00:00Z"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "", "", "",
			"cms v1.4.0\ncommit unknown\nbuilt unknown"},
		{"make build overrides", stamped, "v1.5.0", "feedbeef", "2026-11-25T12:00:00Z",
			"cms v1.5.0\ncommit feedbeef (modified)\nbuilt 2026-11-25T12:00:00Z"},
	} {
		if got := identify(c.bi, c.ldV, c.ldC, c.ldD).String(); got != c.out {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.out)
		}
	}
}
