// Package doctor runs an installation's health checks and reports one
// verdict per line, with the fix for each that is not OK (`cms doctor`).
// The checks themselves (which component, which setting) are the caller's;
// this package runs them in parallel under a deadline each, keeps their
// order, and turns the verdicts into a report and an exit code.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Verdict is a check's outcome, worst last.
type Verdict int

const (
	// OK means nothing to do.
	OK Verdict = iota
	// Warn means it works, but risky or degraded; the line says what to change.
	Warn
	// Fail means broken; the platform (or part of it) does not work until fixed.
	Fail
)

func (v Verdict) String() string {
	switch v {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	default:
		return "FAIL"
	}
}

// Line is one verdict of a check: what was checked (Subject), what was
// found (Detail) and, unless OK, what to do (Fix).
type Line struct {
	Subject string
	Verdict Verdict
	Detail  string
	Fix     string
}

// Check is one named check; Run returns its lines (one or several: a
// component check reports reachability, version and what it holds).
type Check struct {
	Name string
	Run  func(ctx context.Context) []Line
}

// Run runs the checks in parallel, each under timeout (a check that does
// not return in time gets a Fail line saying so; its goroutine is left to
// end with its context), and returns their lines in the checks' order.
func Run(ctx context.Context, checks []Check, timeout time.Duration) []Line {
	out := make([][]Line, len(checks))
	done := make([]chan []Line, len(checks))
	for i, c := range checks {
		done[i] = make(chan []Line, 1)
		go func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			done[i] <- c.Run(cctx)
		}()
	}
	// The checks run together, so one grace period after the timeout
	// bounds them all.
	deadline := time.After(timeout + time.Second)
	expired := false
	for i, c := range checks {
		if !expired {
			select {
			case out[i] = <-done[i]:
				continue
			case <-deadline:
				expired = true
			}
		}
		select {
		case out[i] = <-done[i]:
		default:
			out[i] = []Line{{Subject: c.Name, Verdict: Fail, Detail: fmt.Sprintf("no answer within %v", timeout),
				Fix: "the component hangs: check its host and network"}}
		}
	}
	var all []Line
	for _, l := range out {
		all = append(all, l...)
	}
	return all
}

// Worst is the worst verdict among lines (OK for none).
func Worst(lines []Line) Verdict {
	w := OK
	for _, l := range lines {
		w = max(w, l.Verdict)
	}
	return w
}

// ExitCode is the process exit code for lines: 0 all OK, 1 some warning,
// 2 some failure (the convention of monitoring plugins).
func ExitCode(lines []Line) int { return int(Worst(lines)) }

// Print writes one line per verdict, aligned, with the fix indented below
// a line that is not OK, and a summary line.
func Print(w io.Writer, lines []Line) error {
	width := 0
	for _, l := range lines {
		width = max(width, len(l.Subject))
	}
	var b strings.Builder
	counts := [3]int{}
	for _, l := range lines {
		counts[l.Verdict]++
		fmt.Fprintf(&b, "%-4s  %-*s  %s\n", l.Verdict, width, l.Subject, l.Detail)
		if l.Verdict != OK && l.Fix != "" {
			fmt.Fprintf(&b, "      %-*s  fix: %s\n", width, "", l.Fix)
		}
	}
	fmt.Fprintf(&b, "%d ok, %d warnings, %d failures\n", counts[OK], counts[Warn], counts[Fail])
	_, err := io.WriteString(w, b.String())
	return err
}

// Failed is the line of a check that could not be made: err, with fix.
func Failed(subject string, err error, fix string) Line {
	return Line{Subject: subject, Verdict: Fail, Detail: oneLine(err.Error()), Fix: fix}
}

// oneLine keeps an error's text on one line, at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
