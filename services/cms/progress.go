package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/indexwriter"
)

// progressBar renders indexwriter.Progress: on a terminal one line redrawn in
// place (at most every redraw), otherwise a plain line every plainEvery.
type progressBar struct {
	w          io.Writer
	tty        bool
	label      string
	unit       string // of the rate, "docs" unless set
	start      time.Time
	now        func() time.Time
	last       time.Time
	redraw     time.Duration
	plainEvery time.Duration
	drawn      bool
}

func newProgressBar(w io.Writer, label string) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, tty: tty, label: label, start: time.Now(), now: time.Now,
		redraw: 100 * time.Millisecond, plainEvery: 5 * time.Second}
}

// update shows p (rate-limited); final forces a last line.
func (b *progressBar) update(p indexwriter.Progress, final bool) {
	now := b.now()
	every := b.plainEvery
	if b.tty {
		every = b.redraw
	}
	if !final && b.drawn && now.Sub(b.last) < every {
		return
	}
	b.last, b.drawn = now, true
	line := b.line(p, now.Sub(b.start))
	switch {
	case b.tty && final:
		fmt.Fprintf(b.w, "\r%s\x1b[K\n", line)
	case b.tty:
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
	default:
		fmt.Fprintln(b.w, line)
	}
}

// line is "label [#####.....] done/total pct rate/s ETA".
func (b *progressBar) line(p indexwriter.Progress, elapsed time.Duration) string {
	total := max(p.Total, p.Done)
	frac := 1.0
	if total > 0 {
		frac = float64(p.Done) / float64(total)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.Done) / s
	}
	eta := "?"
	switch {
	case p.Done >= total:
		eta = "0s"
	case rate > 0:
		eta = time.Duration(float64(total-p.Done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	const width = 30
	filled := int(frac * width)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	return fmt.Sprintf("%s [%s] %d/%d %5.1f%% %.0f %s/s ETA %s", b.label, bar, p.Done, total, 100*frac, rate, cmp.Or(b.unit, "docs"), eta)
}
