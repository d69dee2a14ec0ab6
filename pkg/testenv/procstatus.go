package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStatus reads one memory line of /proc/<pid>/status (Linux; pid 0 is
// this process), e.g. "VmRSS", "VmHWM", "RssAnon", in bytes.
func ProcStatus(pid int, field string) (int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: %q", path, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("%s has no %s", path, field)
}
