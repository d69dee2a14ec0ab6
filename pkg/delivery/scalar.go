package delivery

import "strconv"

// Fast paths for the stored scalar values of indexdoc.SourceValue (compact
// JSON): plain integers and strings without escapes (model.PlainString)
// are read directly; a
// value they do not recognise goes through encoding/json as before, so
// the results are identical, only cheaper for the common cases.

// plainInt reads a JSON integer literal without sign tricks, fraction or
// exponent ("0", "123", "-7"); ok is false for anything else.
func plainInt(raw []byte) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// isNumber reports whether raw is exactly a JSON number literal
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, no space around it):
// encoding/json decodes such a literal with strconv, as numberValue does.
func isNumber(raw []byte) bool {
	i := 0
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(raw)
}

// numberValue is what encodeValue makes of a JSON number literal
// (isNumber) as encoding/json reads it: an id when it is an integer in
// range (json.Number.Int64, as refOf), else the float64 (none when out of
// float64's range, where encoding/json fails).
func numberValue(raw []byte) (any, bool) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, false
	}
	if isInteger(raw) { // ParseInt of a fraction would only make an error
		if id, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return id, true
		}
	}
	return f, true
}

// isInteger reports whether the number literal raw has no fraction or
// exponent.
func isInteger(raw []byte) bool {
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}
