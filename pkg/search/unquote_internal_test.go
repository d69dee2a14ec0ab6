package search

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestUnquoteSimpleMatchesJSON: the fast string decoding of a stored
// source field gives what json.Unmarshal gives, whenever it answers: over
// the JSON of random strings (quotes, backslashes, markup, control
// characters, non-ASCII, invalid UTF-8: json.Marshal's escapes) and over
// hand-written literals; and it answers for a stored source's JSON.
func TestUnquoteSimpleMatchesJSON(t *testing.T) {
	check := func(lit []byte) bool {
		t.Helper()
		got, ok := unquoteSimple(lit)
		var want string
		err := json.Unmarshal(lit, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("%q: fast %q, json %q %v", lit, got, want, err)
		}
		return ok
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", " ", `"`, `\`, "/", "<", ">", "&", "\n", "\t", "\r", "\b", "\f", "\x01", "é", "✓", "日", "\xff", "\u2028", "{", "}", ":", ","}
	for range 5000 {
		var s string
		for range r.IntN(40) {
			s += alphabet[r.IntN(len(alphabet))]
		}
		lit, _ := json.Marshal(s)
		check(lit)
		check(lit[:r.IntN(len(lit)+1)])
	}
	for _, lit := range []string{`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041"`, `"\x"`, `"a\"`, `"a"b"`, `"`, ``, `x`, "\"a\x01\"", "\"\xff\"", `"\ud800"`, `"tab\	x"`} {
		check([]byte(lit))
	}
	src, _ := json.Marshal(`{"id":4,"guid":"g","values":[{"a":1000,"l":201,"t":"String","x":"Article 00042 \"quoted\" \\ back"}]}`)
	if !check(src) {
		t.Errorf("a stored source is left to encoding/json: %s", src)
	}
}
