package indexquery

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a wire duration: .NET TimeSpan text ("00:00:05",
// "1.02:03:04.5", "5" = 5 days, as TimeSpan.Parse reads it) or ISO 8601
// ("PT5S", "PT0.5S", "P1DT2H"). Negative durations are refused; so are
// values over 24855 days (they would overflow time.Duration).
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration")
	}
	var d time.Duration
	var err error
	if s[0] == 'P' || s[0] == 'p' {
		d, err = parseISO(s[1:])
	} else {
		d, err = parseTimeSpan(s)
	}
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w (want e.g. \"00:00:05\" or \"PT5S\")", s, err)
	}
	return d, nil
}

const maxSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

func seconds(f float64) (time.Duration, error) {
	if math.IsNaN(f) || f < 0 || f > maxSeconds {
		return 0, errors.New("out of range")
	}
	return time.Duration(math.Round(f * float64(time.Second))), nil
}

// parseTimeSpan reads [d.]hh:mm[:ss[.fffffff]] or a bare day count.
func parseTimeSpan(s string) (time.Duration, error) {
	if strings.HasPrefix(s, "-") {
		return 0, errors.New("negative")
	}
	days := 0.0
	rest := s
	if !strings.Contains(s, ":") {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, errors.New("not a TimeSpan")
		}
		return seconds(float64(n) * 86400)
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 && i < strings.IndexByte(rest, ':') {
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil {
			return 0, errors.New("bad day count")
		}
		days, rest = float64(n), rest[i+1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, errors.New("want hh:mm[:ss]")
	}
	limits := []uint64{23, 59, 59}
	total := days * 86400
	for i, p := range parts {
		if i == 2 {
			whole, frac, hasFrac := strings.Cut(p, ".")
			n, err := strconv.ParseUint(whole, 10, 8)
			if err != nil || len(whole) == 0 || len(whole) > 2 || n > limits[i] {
				return 0, errors.New("bad seconds")
			}
			total += float64(n)
			if hasFrac {
				if frac == "" || len(frac) > 7 || strings.Trim(frac, "0123456789") != "" {
					return 0, errors.New("bad fraction")
				}
				f, _ := strconv.ParseFloat("0."+frac, 64)
				total += f
			}
			continue
		}
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil || len(p) == 0 || len(p) > 2 || n > limits[i] {
			return 0, errors.New("bad hours or minutes")
		}
		total += float64(n) * []float64{3600, 60}[i]
	}
	return seconds(total)
}

// parseISO reads the part after "P": nD, then T with nH nM n[.f]S.
func parseISO(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("no components")
	}
	total := 0.0
	inTime := false
	units := 0
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return 0, errors.New("two T")
			}
			inTime = true
			s = s[1:]
			if s == "" {
				return 0, errors.New("empty time part")
			}
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || i == len(s) {
			return 0, errors.New("want <number><unit>")
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, errors.New("bad number")
		}
		unit := s[i] | 0x20
		s = s[i+1:]
		switch {
		case !inTime && unit == 'd':
			total += n * 86400
		case !inTime && unit == 'w':
			total += n * 7 * 86400
		case inTime && unit == 'h':
			total += n * 3600
		case inTime && unit == 'm':
			total += n * 60
		case inTime && unit == 's':
			total += n
		default:
			return 0, fmt.Errorf("unit %q not allowed here", unit)
		}
		units++
	}
	if units == 0 {
		return 0, errors.New("no components")
	}
	return seconds(total)
}
