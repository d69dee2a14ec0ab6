//go:build !linux

package app

import "time"

type cpuUse struct {
	at          time.Time
	process     time.Duration
	total, idle int64
}

func readCPUUse() cpuUse { return cpuUse{at: time.Now()} }
