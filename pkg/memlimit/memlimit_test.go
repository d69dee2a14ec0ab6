package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func write(t *testing.T, root, file, content string) {
	t.Helper()
	p := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChoose(t *testing.T) {
	cases := []struct {
		name, file, content string
		want                int64
		source              string
	}{
		{"v2 limit", "memory.max", "1073741824\n", 966367641, "cgroup v2"},
		{"v2 unlimited", "memory.max", "max\n", math.MaxInt64, "none"},
		{"v1 limit", "memory/memory.limit_in_bytes", "2147483648\n", 1932735283, "cgroup v1"},
		{"v1 unlimited", "memory/memory.limit_in_bytes", "9223372036854771712\n", math.MaxInt64, "none"},
		{"no cgroup files", "other", "", math.MaxInt64, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, c.file, c.content)
			l, err := Choose("", root, 0.9)
			if err != nil {
				t.Fatal(err)
			}
			if l.Bytes != c.want || !strings.HasPrefix(l.Source, c.source) {
				t.Fatalf("Choose = %+v, want %d from %s", l, c.want, c.source)
			}
		})
	}
	t.Run("v2 wins over v1", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "memory.max", "1000")
		write(t, root, "memory/memory.limit_in_bytes", "5000")
		if l, _ := Choose("", root, 0.5); l.Bytes != 500 {
			t.Fatalf("Choose = %+v, want 500 from v2", l)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "memory.max", "lots")
		if _, err := Choose("", root, 0.9); err == nil {
			t.Fatal("no error for a memory.max that is not a number")
		}
	})
	t.Run("GOMEMLIMIT wins", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "memory.max", "1000")
		prev := debug.SetMemoryLimit(3 << 30)
		defer debug.SetMemoryLimit(prev)
		l, err := Choose("3GiB", root, 0.9)
		if err != nil || l.Bytes != 3<<30 || l.Source != "GOMEMLIMIT" {
			t.Fatalf("Choose = %+v, %v; want the runtime's 3 GiB from GOMEMLIMIT", l, err)
		}
	})
}

// TestDecide: the process's own setting wins, then GOMEMLIMIT and the
// cgroup (Choose), then DefaultLimit; caches take shares of the result.
func TestDecide(t *testing.T) {
	root := t.TempDir()
	write(t, root, "memory.max", "1000000\n")
	if l, _ := decide(5000, "1GiB", root); l.Bytes != 5000 || l.Heap != 3500 || l.Source != "setting" {
		t.Errorf("with a setting: %+v", l)
	}
	if l, _ := decide(0, "", root); l.Bytes != 900000 || l.Heap != 900000 || !strings.HasPrefix(l.Source, "cgroup v2") {
		t.Errorf("with a cgroup limit: %+v", l)
	}
	if l, _ := decide(0, "", t.TempDir()); l.Bytes != DefaultLimit || l.Heap != DefaultLimit*7/10 || l.Source != "default" {
		t.Errorf("with nothing: %+v", l)
	}
	if got := Of(0).Share(16); got != DefaultLimit/16 {
		t.Errorf("Of(0).Share(16) = %d, want %d", got, DefaultLimit/16)
	}
	if got := Of(1 << 30).Share(16); got != 64<<20 {
		t.Errorf("Of(1 GiB).Share(16) = %d", got)
	}
}
