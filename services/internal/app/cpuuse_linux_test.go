package app

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuUse is what the process and the machine spent so far: the process's
// CPU time (server and load generator: the tests run both), and the
// machine's total and idle jiffies (/proc/stat).
type cpuUse struct {
	at          time.Time
	process     time.Duration
	total, idle int64
}

func readCPUUse() cpuUse {
	u := cpuUse{at: time.Now()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.process = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return u
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		u.total += v
		if i == 3 || i == 4 { // idle, iowait
			u.idle += v
		}
	}
	return u
}
