// Package memlimit sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) so that the garbage collector works harder before
// the process reaches its container's memory limit, instead of being
// killed by the kernel.
package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultFraction is the share of the cgroup limit given to the Go heap;
// the rest is left to stacks, cgo, the page cache of memory-mapped files
// (Bleve segments) and the runtime's own overhead.
const DefaultFraction = 0.9

// DefaultCgroupRoot is where cgroup v2 (unified) or v1 is mounted.
const DefaultCgroupRoot = "/sys/fs/cgroup"

// v1Unlimited: cgroup v1 reports "no limit" as a huge page-aligned number.
const v1Unlimited = 1 << 62

// Limit is the decision of Set.
type Limit struct {
	Bytes  int64  // the soft limit in effect; math.MaxInt64 = none
	Source string // "GOMEMLIMIT", "cgroup v2 <file>", "cgroup v1 <file>" or "none"
}

// CgroupLimit reads the memory limit of the cgroup mounted at root:
// v2's memory.max, else v1's memory/memory.limit_in_bytes. It returns 0
// when neither names a limit ("max", v1's near-MaxInt64 value or no file).
func CgroupLimit(root string) (int64, string, error) {
	for _, c := range []struct{ file, name string }{
		{filepath.Join(root, "memory.max"), "cgroup v2"},
		{filepath.Join(root, "memory", "memory.limit_in_bytes"), "cgroup v1"},
	} {
		b, err := os.ReadFile(c.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, "", err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, "", nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("memlimit: %s: %q is not a number of bytes", c.file, s)
		}
		if n <= 0 || n >= v1Unlimited {
			return 0, "", nil
		}
		return n, c.name + " " + c.file, nil
	}
	return 0, "", nil
}

// Choose decides the soft limit: GOMEMLIMIT when set (the runtime has
// already applied it), else fraction of the cgroup limit under root, else
// none.
func Choose(gomemlimit, root string, fraction float64) (Limit, error) {
	if gomemlimit != "" {
		return Limit{Bytes: debug.SetMemoryLimit(-1), Source: "GOMEMLIMIT"}, nil
	}
	n, src, err := CgroupLimit(root)
	if err != nil {
		return Limit{Bytes: math.MaxInt64, Source: "none"}, err
	}
	if n == 0 {
		return Limit{Bytes: math.MaxInt64, Source: "none"}, nil
	}
	return Limit{Bytes: int64(float64(n) * fraction), Source: src}, nil
}

// Set applies Choose(GOMEMLIMIT, DefaultCgroupRoot, DefaultFraction) to
// the runtime and returns it.
func Set() (Limit, error) {
	l, err := Choose(os.Getenv("GOMEMLIMIT"), DefaultCgroupRoot, DefaultFraction)
	if err == nil && l.Source != "GOMEMLIMIT" && l.Bytes != math.MaxInt64 {
		debug.SetMemoryLimit(l.Bytes)
	}
	return l, err
}
