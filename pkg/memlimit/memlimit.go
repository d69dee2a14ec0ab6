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

// DefaultLimit is the memory a process plans for when nothing names a
// limit (no setting, no GOMEMLIMIT, no cgroup limit): what `cms run` on a
// laptop should stay within for a site of about 10,000 objects.
const DefaultLimit = 256 << 20

// HeapFraction is the share of a limit named by the process's setting,
// or of DefaultLimit, given to the Go runtime as its soft limit: the rest
// is the mapped pages of the binary and of Bleve's segments (which RSS
// counts: about 100 MiB for `cms run` on 10,000 objects) and memory
// outside the Go heap.
const HeapFraction = 0.7

// Limit is the decision of Set.
type Limit struct {
	Bytes  int64  // the memory planned for (Choose: the soft limit); math.MaxInt64 = none
	Source string // "setting", "GOMEMLIMIT", "cgroup v2 <file>", "cgroup v1 <file>", "default" or "none"
	// Heap is the Go runtime's soft limit Set applies (Bytes unless the
	// setting or the default named the limit: HeapFraction of it).
	Heap int64
}

// Of is the budget of a process that may use bytes (0 or less, or
// math.MaxInt64: DefaultLimit).
func Of(bytes int64) Budget {
	if bytes <= 0 || bytes == math.MaxInt64 {
		bytes = DefaultLimit
	}
	return Budget(bytes)
}

// Budget is the memory a process plans its caches in; each takes a share.
type Budget int64

// Share is the part 1/n of the budget: what one cache may hold.
func (b Budget) Share(n int64) int64 { return int64(b) / n }

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
		b := debug.SetMemoryLimit(-1)
		return Limit{Bytes: b, Source: "GOMEMLIMIT", Heap: b}, nil
	}
	n, src, err := CgroupLimit(root)
	if err != nil {
		return Limit{Bytes: math.MaxInt64, Source: "none", Heap: math.MaxInt64}, err
	}
	if n == 0 {
		return Limit{Bytes: math.MaxInt64, Source: "none", Heap: math.MaxInt64}, nil
	}
	b := int64(float64(n) * fraction)
	return Limit{Bytes: b, Source: src, Heap: b}, nil
}

// Set decides the process's memory limit and applies its Heap to the
// runtime as the soft limit: setting when positive (the process's own
// configuration), else Choose(GOMEMLIMIT, DefaultCgroupRoot,
// DefaultFraction), else DefaultLimit. It returns the decision; an error
// reading the cgroup is returned with DefaultLimit applied.
func Set(setting int64) (Limit, error) {
	l, err := decide(setting, os.Getenv("GOMEMLIMIT"), DefaultCgroupRoot)
	if l.Source != "GOMEMLIMIT" {
		debug.SetMemoryLimit(l.Heap)
	}
	return l, err
}

// decide is Set's choice without applying it.
func decide(setting int64, gomemlimit, root string) (Limit, error) {
	own := func(b int64, src string) Limit {
		return Limit{Bytes: b, Source: src, Heap: int64(float64(b) * HeapFraction)}
	}
	if setting > 0 {
		return own(setting, "setting"), nil
	}
	l, err := Choose(gomemlimit, root, DefaultFraction)
	if err != nil || l.Bytes == math.MaxInt64 {
		return own(DefaultLimit, "default"), err
	}
	return l, nil
}
