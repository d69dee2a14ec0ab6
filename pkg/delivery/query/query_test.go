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
		if !reflect.DeepEqual(f.Conds, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, f.Conds, c.want)
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
		{`a=1 || b=2`, 5, "|| is not supported"},
		{`a=1|| b=2`, 4, "|| is not supported"},
		{`a=1 b=2`, 3, "value"}, // bare value "1 b=2" is fine? no: see below
		{`a="x`, 3, "unterminated"},
		{`x.y=1`, 2, "only meta"},
		{`=1`, 1, "field name expected"},
		{`a~1`, 2, "operator expected"},
		{`a="x" b`, 7, "expected &&"},
		{`a=b"c`, 4, "quote inside"},
		{`a="\n"`, 4, "escaped"},
		{"a=\xff", 1, "UTF-8"},
		{strings.Repeat("a", MaxFilterLen+1), MaxFilterLen + 1, "longer"},
	}
	for _, c := range cases {
		if c.in == `a=1 b=2` {
			// A bare value runs to && or the end: this is one condition.
			f, err := ParseFilter(c.in)
			if err != nil || len(f.Conds) != 1 || f.Conds[0].Value != "1 b=2" {
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
	keys, err := ParseSort(" displayName, price DESC ,1000 asc")
	want := []SortKey{{Field: "displayName"}, {Field: "price", Desc: true}, {Field: "1000"}}
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

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`displayName:"index"`, `a=1&&meta.type="x"`, `a="\"" && b<=2`, `||`, `a.b=1`} {
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
		for _, c := range fl.Conds {
			if c.Field == "" || c.Op == "" || c.Pos < 0 || c.Pos >= len(s) {
				t.Fatalf("%q: bad condition %+v", s, c)
			}
		}
	})
}
