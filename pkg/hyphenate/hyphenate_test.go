package hyphenate

import (
	"errors"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/errkind"
	"golang.org/x/net/html"
)

// show renders soft hyphens visibly for comparisons.
func show(s string) string { return strings.ReplaceAll(s, SoftHyphen, "-") }

func TestGermanWords(t *testing.T) {
	p := ForLanguage("de-DE")
	if p == nil || p.Len() < 30000 {
		t.Fatalf("German patterns not loaded: %v", p)
	}
	for word, want := range map[string]string{
		"Silbentrennung":   "Sil-ben-tren-nung",
		"Donaudampfschiff": "Do-nau-dampf-schiff",
		"Zusammenarbeit":   "Zu-sam-men-ar-beit",
		"Rechtschreibung":  "Recht-schrei-bung",
		"Schifffahrt":      "Schiff-fahrt",
	} {
		if got := show(p.Hyphenate(word, SoftHyphen)); got != want {
			t.Errorf("%s: got %s, want %s", word, got, want)
		}
	}
}

func TestEnglishWords(t *testing.T) {
	us := ForLanguage("en-US")
	for word, want := range map[string]string{
		"hyphenation":  "hy-phen-ation",
		"typesetting":  "type-set-ting",
		"computer":     "com-puter", // RIGHTHYPHENMIN 3 keeps "er" whole,
		"encyclopedia": "en-cy-clo-pe-dia",
	} {
		if got := show(us.Hyphenate(word, SoftHyphen)); got != want {
			t.Errorf("en-US %s: got %s, want %s", word, got, want)
		}
	}
	if ForLanguage("en-GB") == us || ForLanguage("en_gb") == nil || ForLanguage("EN") != us {
		t.Error("language selection: en-GB must use the British patterns, EN the American")
	}
	if ForLanguage("fr") != nil || ForLanguage("") != nil {
		t.Error("unknown languages have no patterns")
	}
}

func TestHTMLTextNodesOnly(t *testing.T) {
	src := `<p class="Silbentrennung" title="Zusammenarbeit">Die Silbentrennung im Text <!-- Zusammenarbeit --> ` +
		`<a href="https://example.com/Silbentrennung">Zusammenarbeit</a> mail: zusammenarbeit@example.com ` +
		`www.silbentrennung.de <pre>Silbentrennung</pre><code>Zusammenarbeit</code>` +
		`<script>var Silbentrennung = 1;</script><style>.Zusammenarbeit{}</style> Gr&ouml;&szlig;enordnung Abc123Silbentrennung</p>`
	got, err := String(src, "de")
	if err != nil {
		t.Fatal(err)
	}
	want := `<p class="Silbentrennung" title="Zusammenarbeit">Die Sil-ben-tren-nung im Text <!-- Zusammenarbeit --> ` +
		`<a href="https://example.com/Silbentrennung">Zu-sam-men-ar-beit</a> mail: zusammenarbeit@example.com ` +
		`www.silbentrennung.de <pre>Silbentrennung</pre><code>Zusammenarbeit</code>` +
		`<script>var Silbentrennung = 1;</script><style>.Zusammenarbeit{}</style> Gr&ouml;&szlig;en-ord-nung Abc123Silbentrennung</p>`
	if show(got) != want {
		t.Errorf("got\n%s\nwant\n%s", show(got), want)
	}
	if strings.ReplaceAll(got, SoftHyphen, "") != src {
		t.Error("output minus soft hyphens differs from the input")
	}
}

func TestHTMLUnknownLanguageUnchanged(t *testing.T) {
	src := "<p>Silbentrennung</p>"
	if got, _ := String(src, "xx"); got != src {
		t.Errorf("got %q", got)
	}
}

func TestHTMLLimits(t *testing.T) {
	if _, err := String(strings.Repeat("a", MaxInputBytes+1), "de"); !errors.Is(err, errkind.TooLarge) {
		t.Errorf("oversized input: %v", err)
	}
	long := strings.Repeat("silbentrennung", 10) // 140 letters: longer than MaxWordRunes
	if got, _ := String(long, "de"); got != long {
		t.Error("a word over MaxWordRunes must stay unchanged")
	}
	if got, _ := String("Haus Baum", "de"); got != "Haus Baum" {
		t.Error("words under MinWordRunes stay unchanged")
	}
}

// tokens lists the token types and tag names of s.
func tokens(s string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		name, _ := z.TagName()
		out = append(out, tt.String()+":"+string(name))
	}
}

func FuzzHTML(f *testing.F) {
	f.Add("<p>Die Silbentrennung</p>", "de")
	f.Add(`<a href="x">hyphenation &amp; typesetting</a><pre>computer</pre>`, "en")
	f.Add("<p>Gr&ouml;&szlig;enordnung <code>x", "de-AT")
	f.Add("\xff\xfeSilbentrennung<!--", "de")
	f.Fuzz(func(t *testing.T, src, lang string) {
		got, err := String(src, lang)
		if err != nil {
			if len(src) > MaxInputBytes {
				return
			}
			t.Fatalf("error: %v", err)
		}
		if strings.ReplaceAll(got, SoftHyphen, "") != strings.ReplaceAll(src, SoftHyphen, "") {
			t.Fatalf("output minus soft hyphens differs:\n%q\n%q", src, got)
		}
		if strings.Count(got, SoftHyphen) > strings.Count(src, SoftHyphen) {
			a, b := tokens(src), tokens(got)
			if strings.Join(a, ",") != strings.Join(b, ",") {
				t.Fatalf("token structure changed:\n%v\n%v", a, b)
			}
		}
	})
}
