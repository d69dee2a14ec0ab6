package files

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxRanges is the most byte ranges one request may ask for; a Range header
// with more is ignored (the whole file is served), as RFC 9110 allows.
const MaxRanges = 16

// maxRangeHeader bounds the Range header that is parsed at all.
const maxRangeHeader = 1024

// ByteRange is a satisfiable range: Length bytes from Start.
type ByteRange struct {
	Start, Length int64
}

// ContentRange is the Content-Range value of r in a file of size bytes.
func (r ByteRange) ContentRange(size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", r.Start, r.Start+r.Length-1, size)
}

// ParseRange parses a Range header (RFC 9110 14.2) for a file of size
// bytes. It returns nil (serve the whole file) when the header is empty,
// not a bytes range, syntactically invalid or asks for more than MaxRanges
// ranges; the satisfiable ranges otherwise (end positions beyond the file
// are clamped, suffix ranges count from the end), coalesced: ranges that
// overlap or touch become one and the result is in file order (RFC 9110
// 14.2 allows both), so the parts never add up to more than the file; and
// ErrRangeNotSatisfiable when no range is satisfiable.
func ParseRange(header string, size int64) ([]ByteRange, error) {
	if header == "" || len(header) > maxRangeHeader {
		return nil, nil
	}
	unit, set, ok := strings.Cut(header, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil, nil
	}
	specs := strings.Split(set, ",")
	if len(specs) > MaxRanges {
		return nil, nil
	}
	var out []ByteRange
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		first, last, ok := strings.Cut(spec, "-")
		if !ok {
			return nil, nil
		}
		if first == "" { // suffix: the last n bytes
			n, ok := parseNonNegative(last)
			if !ok {
				return nil, nil
			}
			if n == 0 || size == 0 {
				continue
			}
			n = min(n, size)
			out = append(out, ByteRange{Start: size - n, Length: n})
			continue
		}
		start, ok := parseNonNegative(first)
		if !ok {
			return nil, nil
		}
		end := size - 1
		if last != "" {
			e, ok := parseNonNegative(last)
			if !ok || e < start {
				return nil, nil
			}
			end = min(e, size-1)
		}
		if start >= size {
			continue
		}
		out = append(out, ByteRange{Start: start, Length: end - start + 1})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q for %d bytes", ErrRangeNotSatisfiable, clip(header), size)
	}
	return coalesce(out), nil
}

// coalesce sorts rs by start and merges the ranges that overlap or touch.
func coalesce(rs []ByteRange) []ByteRange {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b ByteRange) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if end := last.Start + last.Length; r.Start <= end {
			last.Length = max(end, r.Start+r.Length) - last.Start
			continue
		}
		out = append(out, r)
	}
	return out
}

// parseNonNegative parses decimal digits only (no sign, no spaces).
func parseNonNegative(s string) (int64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
