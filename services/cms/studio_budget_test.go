package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

const (
	// studioBinaryBudget is the most the studio may add to the binary.
	studioBinaryBudget = 10 << 20
	// studioIdleRSSBudget is the most `cms run` may hold, idle, with the
	// studio open.
	studioIdleRSSBudget = 100 << 20
	// studioIdleFor is how long the studio stays open before the reading.
	studioIdleFor = 5 * time.Second
)

// TestStudioBudgets builds the cms binary twice, with the studio and
// with the tag nostudio (no bundle): the difference must be within
// studioBinaryBudget. Both builds share the build cache (same flags as
// `go build ./...`, whose cache CI warms), so each is mostly a link. Then
// it starts the built binary (`cms run`, embedded components), opens the
// studio in Chromium, signs in, shows a branch's content, waits
// studioIdleFor and reads the process's resident set: at most
// studioIdleRSSBudget.
func TestStudioBudgets(t *testing.T) {
	chromium := testenv.Tool(t, testenv.Chromium)
	dir := t.TempDir()
	build := func(tags ...string) (string, int64) {
		t.Helper()
		out := filepath.Join(dir, "cms"+strings.Join(tags, "-"))
		args := []string{"build", "-o", out}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		cmd := exec.Command(goTool(t), append(args, ".")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		return out, fi.Size()
	}
	bin, with := build()
	t.Run("binary", func(t *testing.T) {
		_, without := build("nostudio")
		grown := with - without
		t.Logf("cms binary: %.1f MB with the studio, %.1f MB without: the studio adds %.1f kB (budget %d MB)",
			float64(with)/1e6, float64(without)/1e6, float64(grown)/1e3, studioBinaryBudget>>20)
		if grown > studioBinaryBudget {
			t.Errorf("the studio adds %d bytes to the binary, over the budget of %d", grown, studioBinaryBudget)
		}
		if grown <= 0 {
			t.Errorf("the binary without the studio is not smaller (%d vs %d): is the bundle embedded?", without, with)
		}
	})
	t.Run("idle memory", func(t *testing.T) {
		p := startCMS(t, bin, t.TempDir())
		s := &studioSetup{name: "embedded", base: p.base, proc: p, browser: studioBrowser(t, chromium), shotsDir: screenshotDir(t, "budgets")}
		pg := s.page(t, "editor")
		pg.login()
		pg.waitFor("the content view", `location.pathname.startsWith("/studio/b/") && !!document.querySelector(".topbar")`)
		time.Sleep(studioIdleFor)
		rss, anon := residentBytes(t, p.cmd.Process.Pid)
		pg.shot("idle")
		t.Logf("cms run, idle with the studio open for %v: RSS %.1f MiB (%.1f MiB anonymous; budget %d MiB)", studioIdleFor,
			float64(rss)/(1<<20), float64(anon)/(1<<20), studioIdleRSSBudget>>20)
		if rss > studioIdleRSSBudget {
			t.Errorf("cms run holds %d bytes resident with the studio open, over the budget of %d", rss, studioIdleRSSBudget)
		}
	})
}

// goTool is the go command that runs the tests (on PATH).
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	return p
}

// residentBytes reads VmRSS and RssAnon of a process (Linux).
func residentBytes(t *testing.T, pid int) (rss, anon int64) {
	t.Helper()
	rss, err := testenv.ProcStatus(pid, "VmRSS")
	if err == nil {
		anon, err = testenv.ProcStatus(pid, "RssAnon")
	}
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no /proc here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rss, anon
}
