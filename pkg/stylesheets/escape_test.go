package stylesheets

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"Open Sans":        `"Open Sans"`,
		`x"; } body {`:     `"x\000022\00003b  \00007d  body \00007b"`,
		"Grüße":            `"Grüße"`,
		"</style><script>": `"\00003c\00002fstyle\00003e\00003cscript\00003e"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestValidators(t *testing.T) {
	if _, ok := Ident("heading-1"); !ok {
		t.Error("heading-1 is an identifier")
	}
	for _, bad := range []string{"", "1a", "a b", "a;b", "a{", "-x", strings.Repeat("a", 129)} {
		if _, ok := Ident(bad); ok {
			t.Errorf("Ident(%q) accepted", bad)
		}
	}
	if c, ok := Color("FF8800"); !ok || c != "#ff8800" {
		t.Errorf("Color = %q %v", c, ok)
	}
	for _, bad := range []string{"red;}", "#12", "#1234567890", "url(x)", "#gggggg"} {
		if _, ok := Color(bad); ok {
			t.Errorf("Color(%q) accepted", bad)
		}
	}
	if n, ok := Number(12.5, 0, 100, "pt"); !ok || n != "12.5pt" {
		t.Errorf("Number = %q", n)
	}
	if _, ok := Number(1e300, 0, 100, "pt"); ok {
		t.Error("out of range number accepted")
	}
	if _, ok := Keyword("center;}", "center"); ok {
		t.Error("keyword with a tail accepted")
	}
}

func TestUnsafe(t *testing.T) {
	for _, bad := range []string{
		"a { background: url(javascript:alert(1)) }",
		`a { background: url("j\61vascript:alert(1)") }`,
		"a { background: url(java/**/script:x) }",
		"a { width: expression(alert(1)) }",
		"</style><script>alert(1)</script>",
		"a { -moz-binding: url(x.xml#x) }",
		"a { b: c }\x00",
	} {
		if Unsafe(bad) == "" {
			t.Errorf("Unsafe(%q) found nothing", bad)
		}
	}
	if got := Unsafe(".a { color: #fff; background: url(\"/img/x.png\") } @media print { .b { display: none } }"); got != "" {
		t.Errorf("a harmless sheet flagged: %s", got)
	}
}

// FuzzQuote: a quoted string is one CSS string token whatever s holds: it
// reads back to s (invalid UTF-8 and NUL as U+FFFD) and holds no
// character that could end it, a declaration or a rule.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"Open Sans", `x"; } body {`, "</style>", "a\\", "\x00\xff", "\n\r\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if strings.ContainsAny(q[1:len(q)-1], "\"'\n\r\f;{}<>():") {
			t.Fatalf("Quote(%q) = %s holds a structural character", s, q)
		}
		back, ok := Unquote(q)
		want := strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", string(utf8.RuneError)), string(utf8.RuneError))
		if !ok || back != strings.ReplaceAll(want, "\x00", string(utf8.RuneError)) {
			// ToValidUTF8 folds a run of invalid bytes into one U+FFFD;
			// ranging over the string gives one per byte: compare per rune.
			if !ok || back != runeWise(s) {
				t.Fatalf("Unquote(Quote(%q)) = %q, %v", s, back, ok)
			}
		}
	})
}

// runeWise is s as Go's range reads it, NUL replaced: what Quote encodes.
func runeWise(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == 0 {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzUnsafe: the check never panics, and a source it accepts holds none
// of the forbidden constructs even in plain text.
func FuzzUnsafe(f *testing.F) {
	for _, s := range []string{"a{b:c}", `url("j\61vascript:x")`, "/* x", "\\", "\\0000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Unsafe(s) != "" {
			return
		}
		low := strings.ToLower(s)
		for _, f := range forbidden {
			if strings.Contains(low, f) {
				t.Fatalf("accepted %q with %q", s, f)
			}
		}
	})
}
