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
