package indexquery

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"00:00:05": 5 * time.Second, "00:01": time.Minute, "1.02:03:04.5": 26*time.Hour + 3*time.Minute + 4500*time.Millisecond,
		"00:00:00.1234567": 123456700 * time.Nanosecond, "2": 48 * time.Hour,
		"PT5S": 5 * time.Second, "PT0.5S": 500 * time.Millisecond, "P1DT2H": 26 * time.Hour, "PT1M30S": 90 * time.Second,
		" pt2s ": 2 * time.Second,
	}
	for in, want := range good {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-00:00:05", "00:60:00", "24:00:00", "PT", "P", "PT5", "P5H", "PT5D", "5s",
		"00:00:05.", "00:00:05.12345678", "1:2:3:4", "PTT5S", "99999999999999999999"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"00:00:05", "PT5S", "1.02:03:04.5", "P1DT2H", "5", "-1", "PT1e9S", "P9999999999D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v: negative", s, d)
		}
	})
}
