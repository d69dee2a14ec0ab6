package jobs

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sampler takes metric samples of the runner process while a job runs:
// the job's up time, the process's resident memory (MiB) and its CPU use
// since the previous sample (fraction of one core). Jobs share their
// runner's process, so memory and CPU are the process's, not one job's.
type sampler struct {
	started  time.Time
	lastWall time.Time
	lastCPU  time.Duration
}

func newSampler(started *time.Time) *sampler {
	s := &sampler{started: time.Now(), lastWall: time.Now(), lastCPU: cpuTime()}
	if started != nil {
		s.started = *started
	}
	return s
}

func (s *sampler) sample() Metric {
	now, cpu := time.Now(), cpuTime()
	m := Metric{UpTime: now.Sub(s.started).Seconds(), Memory: rssMiB()}
	if wall := now.Sub(s.lastWall); wall > 0 {
		m.CPU = float64(cpu-s.lastCPU) / float64(wall)
	}
	s.lastWall, s.lastCPU = now, cpu
	return m
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssMiB reads the resident set size from /proc (Linux); elsewhere it
// falls back to the memory the Go runtime holds from the system.
func rssMiB() float64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return float64(pages*int64(os.Getpagesize())) / (1 << 20)
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.Sys) / (1 << 20)
}

// addMetric appends a sample; beyond max every other one of the older
// half is dropped, so a long job keeps samples over its whole run.
func (t *Task) addMetric(limit int, m Metric) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Job.Metrics = append(t.Job.Metrics, m)
	if len(t.Job.Metrics) > limit {
		half := len(t.Job.Metrics) / 2
		kept := make([]Metric, 0, len(t.Job.Metrics))
		for i, s := range t.Job.Metrics[:half] {
			if i%2 == 0 {
				kept = append(kept, s)
			}
		}
		t.Job.Metrics = append(kept, t.Job.Metrics[half:]...)
	}
	t.metricsDirty = true
}

// takeMetrics returns the samples when they changed since the last call.
func (t *Task) takeMetrics() ([]Metric, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := t.metricsDirty
	t.metricsDirty = false
	return append([]Metric(nil), t.Job.Metrics...), changed
}
