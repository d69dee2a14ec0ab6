package query

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	cases := []struct {
		in   string
		want []Cond
	}{
		{"", nil},
		{"   ", nil},
		{`displayName:"index"`, []Cond{{Field: "displayName", Op: OpContains, Value: "index", Quoted: true}}},
		{`price>=10 && meta.type = "page" && title != a b `, []Cond{
			{Field: "price", Op: OpGreatEq, Value: "10"},
			{Field: "type", Meta: true, Op: OpEq, Value: "page", Quoted: true, Pos: 13},
			{Field: "title", Op: OpNotEq, Value: "a b", Pos: 35},
		}},
		{`a<1&&b>2&&c<=3&&d=4`, []Cond{
			{Field: "a", Op: OpLess, Value: "1"}, {Field: "b", Op: OpGreater, Value: "2", Pos: 5},
			{Field: "c", Op: OpLessEq, Value: "3", Pos: 10}, {Field: "d", Op: OpEq, Value: "4", Pos: 16},
		}},
		{`q="say \"hi\" \\ && more"`, []Cond{{Field: "q", Op: OpEq, Value: `say "hi" \ && more`, Quoted: true}}},
		{`straße="ü"`, []Cond{{Field: "straße", Op: OpEq, Value: "ü", Quoted: true}}},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(f.Conds(), c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, f.Conds(), c.want)
		}
		if _, or := f.HasOr(); or || (len(c.want) > 0 && len(f.Or) != 1) {
			t.Errorf("%q: %d alternatives, want one", c.in, len(f.Or))
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	cases := []struct {
		in      string
		pos     int // 1-based, as in the message
		msgPart string
	}{
		{`a`, 2, "operator expected"},
		{`a=`, 3, "value expected"},
		{`a=1 &&`, 7, "condition expected"},
		{`a=1 ||`, 7, "condition expected after ||"},
		{`a=1 || `, 8, "condition expected after ||"},
		{`|| a=1`, 1, "field name expected"},
		{`a=1 || || b=2`, 8, "field name expected"},
		{`a=1 && || b=2`, 8, "field name expected"},
		{`a=|| b=2`, 3, "value expected"},
		{`a="x" | b=2`, 7, "expected && or ||"},
		{`a=1 b=2`, 3, "value"}, // bare value "1 b=2" is fine? no: see below
		{`a="x`, 3, "unterminated"},
		{`x.y=1`, 2, "only meta"},
		{`=1`, 1, "field name expected"},
		{`a~1`, 2, "operator expected"},
		{`a="x" b`, 7, "expected && or ||"},
		{`a=b"c`, 4, "quote inside"},
		{`a="\n"`, 4, "escaped"},
		{"a=\xff", 1, "UTF-8"},
		{strings.Repeat("a", MaxFilterLen+1), MaxFilterLen + 1, "longer"},
	}
	for _, c := range cases {
		if c.in == `a=1 b=2` {
			// A bare value runs to && or the end: this is one condition.
			f, err := ParseFilter(c.in)
			if err != nil || len(f.Conds()) != 1 || f.Conds()[0].Value != "1 b=2" {
				t.Errorf("%q: %+v %v", c.in, f, err)
			}
			continue
		}
		_, err := ParseFilter(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: want a syntax error, got %v", c.in, err)
			continue
		}
		if se.Pos+1 != c.pos || !strings.Contains(se.Error(), c.msgPart) {
			t.Errorf("%q: got %q (position %d), want position %d containing %q", c.in, se.Error(), se.Pos+1, c.pos, c.msgPart)
		}
	}
}

func TestParseSortAndPage(t *testing.T) {
	keys, err := ParseSort(" displayName, price DESC ,1000 asc, $score, $SCORE asc")
	want := []SortKey{{Field: "displayName"}, {Field: "price", Desc: true}, {Field: "1000"},
		{Field: "$score", Desc: true}, {Field: "$SCORE"}}
	if err != nil || !reflect.DeepEqual(keys, want) {
		t.Fatalf("got %+v %v", keys, err)
	}
	for _, bad := range []string{"a,,b", "a up", "a desc x"} {
		if _, err := ParseSort(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, take, err := Page(0, 0); err != nil || take != DefaultTake {
		t.Fatalf("default take: %d %v", take, err)
	}
	for _, bad := range [][2]int64{{-1, 10}, {0, -1}, {0, 1001}} {
		if _, _, err := Page(bad[0], bad[1]); err == nil {
			t.Errorf("skip=%d take=%d accepted", bad[0], bad[1])
		}
	}
}

func TestParseFilterOr(t *testing.T) {
	type conj = []string // conditions as Cond.String
	cases := []struct {
		in    string
		want  []conj
		orPos []int
	}{
		{`a=1 || b=2`, []conj{{`a="1"`}, {`b="2"`}}, []int{-1, 4}},
		{`a=1&&b=2||c=3&&d=4`, []conj{{`a="1"`, `b="2"`}, {`c="3"`, `d="4"`}}, []int{-1, 8}},
		// && binds tighter: a || (b && c) || d.
		{`a=1 || b=2 && c=3 || meta.type=x`, []conj{{`a="1"`}, {`b="2"`, `c="3"`}, {`meta.type="x"`}}, []int{-1, 4, 18}},
		// Quoted values may contain the operators.
		{`q="x || y" || r:"a && b"`, []conj{{`q="x || y"`}, {`r:"a && b"`}}, []int{-1, 11}},
		// A bare value ends at ||.
		{`t=a b||u=c`, []conj{{`t="a b"`}, {`u="c"`}}, []int{-1, 5}},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var got []conj
		var pos []int
		for _, cj := range f.Or {
			var g conj
			for _, cd := range cj.Conds {
				g = append(g, cd.String())
			}
			got, pos = append(got, g), append(pos, cj.OrPos)
		}
		if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(pos, c.orPos) {
			t.Errorf("%q:\n got %v %v\nwant %v %v", c.in, got, pos, c.want, c.orPos)
		}
		if p, ok := f.HasOr(); !ok || p != c.orPos[1] || c.in[p:p+2] != "||" {
			t.Errorf("%q: HasOr = %d %v", c.in, p, ok)
		}
	}
	// Condition positions stay those of the whole expression.
	f, _ := ParseFilter(`a=1 || bb<2`)
	if cs := f.Conds(); len(cs) != 2 || cs[1].Pos != 7 || cs[1].Field != "bb" || cs[1].Op != OpLess {
		t.Fatalf("conds = %+v", cs)
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`displayName:"index"`, `a=1&&meta.type="x"`, `a="\"" && b<=2`, `||`, `a.b=1`,
		`a=1 || b=2 && c=3`, `q="x || y"||r=2`, `a=||`, `a=1|||b=2`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseFilter(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("%q: bad error %v", s, err)
			}
			return
		}
		last := -1
		for i, cj := range fl.Or {
			if len(cj.Conds) == 0 {
				t.Fatalf("%q: empty alternative %d", s, i)
			}
			if (i == 0) != (cj.OrPos == -1) || (i > 0 && (cj.OrPos <= last || s[cj.OrPos:cj.OrPos+2] != "||")) {
				t.Fatalf("%q: alternative %d at bad || position %d", s, i, cj.OrPos)
			}
			for _, c := range cj.Conds {
				if c.Field == "" || c.Op == "" || c.Pos <= last || c.Pos >= len(s) {
					t.Fatalf("%q: bad condition %+v", s, c)
				}
				last = c.Pos
			}
		}
		// The canonical form parses to the same tree.
		again, err := ParseFilter(fl.String())
		if err != nil {
			if len(fl.String()) > MaxFilterLen {
				return
			}
			t.Fatalf("%q: canonical form %q: %v", s, fl.String(), err)
		}
		if again.String() != fl.String() || len(again.Or) != len(fl.Or) {
			t.Fatalf("%q: canonical form %q reparses as %q", s, fl.String(), again.String())
		}
		for i := range fl.Or {
			a, b := fl.Or[i].Conds, again.Or[i].Conds
			for j := range a {
				if a[j].Field != b[j].Field || a[j].Meta != b[j].Meta || a[j].Op != b[j].Op || a[j].Value != b[j].Value {
					t.Fatalf("%q: condition %+v reparses as %+v", s, a[j], b[j])
				}
			}
		}
	})
}
