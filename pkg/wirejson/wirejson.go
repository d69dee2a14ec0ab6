// Package wirejson holds the primitives of NovaDB's JSON wire format that
// both the gateway's message encoder (services/internal/gateway) and the
// domain encoders that write answers straight from their views
// (pkg/delivery) use, so that the two write the same bytes: strings as
// encoding/json escapes them without HTML escaping, google.protobuf.Struct
// strings and numbers as protojson writes them, and timestamps in the .NET
// round-trip form.
package wirejson

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// dotNetTime is the .NET round-trip ("o") format NovaDB writes, with up to
// seven fractional digits; trailing zeros are dropped after formatting.
const dotNetTime = "2006-01-02T15:04:05.0000000Z"

// FormatTime writes t in NovaDB's wire form: UTC, up to 7 fractional digits,
// trailing zeros (and a bare dot) dropped: "2024-05-01T10:00:00.1234567Z".
func FormatTime(t time.Time) string {
	var b [len(dotNetTime)]byte
	return string(AppendTime(b[:0], t))
}

// AppendTime appends FormatTime(t) to b, without quotes.
func AppendTime(b []byte, t time.Time) []byte {
	start := len(b)
	b = t.UTC().AppendFormat(b, dotNetTime)
	frac := b[start+20 : len(b)-1] // the seven digits between "." and "Z"
	trimmed := bytes.TrimRight(frac, "0")
	if len(trimmed) == 0 {
		return append(b[:start+19], 'Z') // no dot either
	}
	return append(b[:start+20+len(trimmed)], 'Z')
}

// AppendString appends s as a JSON string escaped as encoding/json does
// (control characters, '"', '\\', U+2028, U+2029; invalid UTF-8 becomes
// \ufffd) but without its HTML escaping: NovaDB (Newtonsoft) writes <, >
// and & as they are. Runs of bytes that need no escaping are copied in
// bulk.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscapedASCII(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ErrInvalidUTF8 is AppendStructString's error, protojson's refusal of a
// google.protobuf.Struct string that is not UTF-8.
var ErrInvalidUTF8 = errors.New("invalid UTF-8 in string")

// AppendStructString escapes s as protojson does in a
// google.protobuf.Struct (keys and string values): like AppendString but
// U+2028 and U+2029 are written as they are and invalid UTF-8 is
// ErrInvalidUTF8.
func AppendStructString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !jsonSafe[c] {
				b = append(b, s[start:i]...)
				b = appendEscapedASCII(b, c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return b, ErrInvalidUTF8
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// AppendNumber formats a finite float64 as encoding/json and protojson
// write a google.protobuf.Value number: %f, or %e for very small and very
// large magnitudes with a two-digit exponent trimmed ("1e-07" → "1e-7").
// The caller refuses NaN and infinities (protojson does).
func AppendNumber(b []byte, f float64) []byte {
	if f != 0 && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		// An integer (ids, counts) is exact and its shortest form is its
		// digits; -0 is left to strconv ("-0").
		return strconv.AppendInt(b, int64(f), 10)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes written as they are: everything but
// control characters, '"' and '\\'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendEscapedASCII escapes a control character, '"' or '\\' as both
// encoding/json and protojson do.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
