package sandbox

import (
	"context"
	"errors"
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/fairshare"
)

func render(t *testing.T, e *Engine, text string, data any) ([]byte, error) {
	t.Helper()
	tpl, err := e.Compile("page", text, template.FuncMap{"upper": strings.ToUpper})
	if err != nil {
		return nil, err
	}
	return tpl.Execute(context.Background(), data)
}

// A template renders with html/template's escaping and the given
// functions; an empty one renders nothing.
func TestRender(t *testing.T) {
	e := New(Limits{})
	out, err := render(t, e, `<p title="{{.T}}">{{upper .N}}</p>{{range .L}}<i>{{.}}</i>{{end}}`,
		map[string]any{"T": `a"b`, "N": "<x>", "L": []string{"1", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<p title="a&#34;b">&lt;X&gt;</p><i>1</i><i>2</i>`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	if out, err := render(t, e, "", nil); err != nil || len(out) != 0 {
		t.Errorf("empty template: %q, %v", out, err)
	}
}

// Errors name the kind and, where text/template reports it, the line and
// column.
func TestErrorsHavePositions(t *testing.T) {
	e := New(Limits{})
	for _, c := range []struct {
		text       string
		kind       error
		line, col  int
		msgContain string
	}{
		{"line one\n{{.A", ErrInvalid, 2, 0, "unclosed action"},
		{"a\nb {{nofunc 1}}", ErrInvalid, 2, 0, "not defined"},
		{"x\n\n  {{index .A 5}}", ErrExecution, 3, 4, "index out of range"},
		{`{{define "x"}}y{{end}}`, ErrInvalid, 0, 0, "define"},
		{"ok\n {{template \"page\"}}", ErrInvalid, 2, 12, "template"},
		{"{{range 100000}}x{{end}}", ErrInvalid, 1, 8, "loop count"},
		{"{{$n := 1000000000}}{{range $n}}{{end}}", ErrInvalid, 1, 2, "loop count"},
		{"{{$n := (or 1000000000 0)}}{{range $n}}{{end}}", ErrInvalid, 1, 2, "loop count"},
		{`{{printf "%1000000000d" 1}}`, ErrExecution, 1, 2, "printf"},
		{`{{printf "%*d" 1000000000 1}}`, ErrExecution, 1, 2, "printf"},
	} {
		_, err := render(t, e, c.text, map[string]any{"A": []int{1}})
		var re *Error
		if !errors.As(err, &re) || !errors.Is(err, c.kind) {
			t.Errorf("%q: %v, want %v", c.text, err, c.kind)
			continue
		}
		if re.Line != c.line || c.col > 0 && re.Column != c.col || !strings.Contains(re.Msg, c.msgContain) {
			t.Errorf("%q: line %d col %d %q, want line %d col %d containing %q", c.text, re.Line, re.Column, re.Msg, c.line, c.col, c.msgContain)
		}
	}
	// Comparing with a large number is fine: only loop counts are bounded.
	if out, err := render(t, e, "{{if gt .P 50000000}}big{{end}}", map[string]any{"P": 60000000}); err != nil || string(out) != "big" {
		t.Errorf("comparison with a large literal: %q, %v", out, err)
	}
}

// Output beyond the limit and renders beyond the deadline end with their
// errors; a loop that writes nothing stops at a range check with the
// position of the range; a render stuck in one call is abandoned at the
// deadline and keeps its slot until it ends, so at most MaxRunning run.
func TestLimits(t *testing.T) {
	e := New(Limits{MaxOutputBytes: 1000, Timeout: 200 * time.Millisecond, MaxRunning: 1})
	if _, err := render(t, e, "{{range .}}xxxxxxxxxx{{end}}", make([]int, 1000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("large output: %v", err)
	}
	big := make([]int, 5000) // 25 M silent iterations: about a second
	start := time.Now()
	_, err := render(t, e, "a\n  {{range $a := .}}{{range $b := $}}{{end}}{{end}}", big)
	var re *Error
	if !errors.Is(err, ErrTimeout) || time.Since(start) > time.Second || !errors.As(err, &re) || re.Line != 2 || re.Column == 0 {
		t.Fatalf("silent loop: %v after %v", err, time.Since(start))
	}
	// Literal loops nested three deep (10^12 iterations) stop too.
	if _, err := render(t, e, "{{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}", nil); !errors.As(err, &re) ||
		!errors.Is(err, ErrTimeout) || re.Line != 1 {
		t.Fatalf("nested literal loops: %v", err)
	}
	stuck, err := e.Compile("stuck", "{{sleep}}", template.FuncMap{"sleep": func() string { time.Sleep(time.Second); return "" }})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := stuck.Execute(context.Background(), nil); !errors.Is(err, ErrTimeout) || time.Since(start) > 600*time.Millisecond {
		t.Fatalf("stuck call: %v after %v", err, time.Since(start))
	}
	if _, err := render(t, e, "ok", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("while the abandoned render runs: %v, want ErrBusy", err)
	}
	e2 := New(Limits{Timeout: 100 * time.Millisecond, MaxOutputBytes: 1 << 30})
	if _, err := render(t, e2, "{{range .}}{{range $}}x{{end}}{{end}}", big); !errors.Is(err, ErrTimeout) {
		t.Errorf("long output loop: %v", err)
	}
	if _, err := e.Compile("big", strings.Repeat("x", DefaultMaxTemplateBytes+1), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized template: %v", err)
	}
}

// A template called from another one renders inline within the outer
// render's deadline and output budget; its errors keep its own name and
// position, and range checks do not change the output (also in script
// context).
func TestInline(t *testing.T) {
	e := New(Limits{})
	inner, err := e.Compile("inner", "<b>{{.}}</b>\n{{index . 5}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := e.Compile("outer", "<p>{{call1 .}}</p>", template.FuncMap{"call1": func(v any) (template.HTML, error) {
		out, err := inner.ExecuteInline(context.Background(), v, 1000)
		return template.HTML(out), err
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = outer.Execute(context.Background(), "x")
	var re *Error
	if !errors.As(err, &re) || re.Template != "inner" || re.Line != 2 {
		t.Fatalf("inner error: %v", err)
	}
	out, err := render(t, e, "<script>var a = [{{range .}}{{.}},{{end}}];</script>", []int{1, 2})
	if err != nil || string(out) != "<script>var a = [ 1 , 2 ,];</script>" {
		t.Errorf("range in script: %q, %v", out, err)
	}
}

// FuzzTemplate: any text compiles or is refused, and a compiled one
// renders or fails within its deadline, never panicking.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "{{.}}", "{{range .L}}{{.}}{{end}}", "{{printf \"%5d\" 3}}", "{{with $x := .}}{{$x}}{{end}}",
		"{{if .}}a{{else}}b{{end}}", "{{index .L 9}}", `{{define "a"}}{{end}}`, "{{range 3}}{{.}}{{end}}", "{{slice .S 1 2}}"} {
		f.Add(s)
	}
	e := New(Limits{Timeout: 50 * time.Millisecond, MaxOutputBytes: 1 << 16, MaxRunning: 64, MaxRunningPerUser: 64})
	data := map[string]any{"L": []string{"a", "b"}, "S": "hello", "N": 3.5}
	f.Fuzz(func(t *testing.T, text string) {
		tpl, err := e.Compile("f", text, nil)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("compile error is no *Error: %v", err)
			}
			return
		}
		start := time.Now()
		_, err = tpl.Execute(context.Background(), data)
		if time.Since(start) > time.Second {
			t.Fatalf("render took %v", time.Since(start))
		}
		if err != nil && !errors.Is(err, ErrBusy) {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("render error is no *Error: %v", err)
			}
		}
	})
}

// StringArgs finds the literals passed to the named functions anywhere in
// the template (nested pipelines, range and if bodies), once each.
func TestStringArgs(t *testing.T) {
	e := New(Limits{})
	f := func(o any, s string) string { return s }
	tpl, err := e.Compile("p", `{{f . "a"}}{{range .}}{{if f . "b"}}{{g (f . "c") "x"}}{{end}}{{else}}{{f . "a"}}{{end}}{{with $v := f . "d"}}{{$v}}{{end}}{{f . .}}`,
		template.FuncMap{"f": f, "g": f})
	if err != nil {
		t.Fatal(err)
	}
	if got := tpl.StringArgs(2, "f"); strings.Join(got, ",") != "a,b,c,d" {
		t.Errorf("StringArgs = %v", got)
	}
}

// One reader saturating the renders with endless loops (Reliability II
// item 5) gets 429 beyond its own share and never makes an
// administrator's render fail: the reserve stays free for them.
func TestFairShare(t *testing.T) {
	e := New(Limits{Timeout: 2 * time.Second, MaxRunning: 4, MaxRunningPerUser: 3, AdminReserve: 1})
	reader := auth.WithPrincipal(context.Background(), auth.Principal{Name: "reader"})
	admin := auth.WithPrincipal(context.Background(), auth.Principal{Name: "root", Admin: true})
	loop, err := e.Compile("loop", "{{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 24)
	for range 24 {
		go func() { _, err := loop.Execute(reader, nil); results <- err }()
	}
	// The reader's renders run (at most its 3) or are refused at once.
	refused := 0
	for refused < 21 {
		err := <-results
		var le *fairshare.LimitError
		if !errors.As(err, &le) || le.Cap != CapRunningPerUser {
			t.Fatalf("the reader's extra render: %v, want a LimitError", err)
		}
		refused++
	}
	if e.Running() != 3 {
		t.Fatalf("running %d, want the reader's 3", e.Running())
	}
	ok, err := e.Compile("ok", "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if out, err := ok.Execute(admin, nil); err != nil || string(out) != "hello" {
			t.Fatalf("admin render while the reader saturates: %q, %v", out, err)
		}
	}
	for range 3 {
		if err := <-results; !errors.Is(err, ErrTimeout) {
			t.Errorf("the reader's loop: %v, want ErrTimeout", err)
		}
	}
}
