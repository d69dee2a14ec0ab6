package content

import (
	"errors"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func TestValueLimits(t *testing.T) {
	backends(t, func(t *testing.T, _ *Service, st store.Store) {
		s := New(st, nil, WithValueLimits(ValueLimits{MaxValueBytes: 100, MaxRequestValueBytes: 250}))
		sc := newSchema(t, s)
		fits := strings.Repeat("a", 98) // 100 bytes of JSON with the quotes
		over := fits + "b"
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.title, LanguageEnUS, fits)}}}))

		tooLarge := func(what string, err error, detail ...string) {
			t.Helper()
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%s: err = %v, want ErrTooLarge", what, err)
			}
			for _, d := range detail {
				if !strings.Contains(err.Error(), d) {
					t.Errorf("%s: error %q does not say %q", what, err, d)
				}
			}
		}
		_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.title, LanguageEnUS, over)}}})
		tooLarge("create", err, "attribute", "101 bytes", "limit is 100 bytes")
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(sc.title, LanguageEnUS, over)}}})
		tooLarge("update", err, "limit is 100 bytes")
		_, _, err = s.CreateBranch(ctxBG, editor, []ValueInput{vin(AttrName, LanguageEnUS, over)})
		tooLarge("create branch", err, "limit is 100 bytes")
		_, _, err = s.UpdateBranch(ctxBG, "4", editor, []ValueInput{vin(AttrName, LanguageEnUS, over)})
		tooLarge("update branch", err, "limit is 100 bytes")
		three := []ObjectInput{}
		for range 3 {
			three = append(three, ObjectInput{TypeID: sc.article, Values: []ValueInput{vin(sc.title, LanguageEnUS, fits)}})
		}
		_, _, err = s.CreateObjects(ctxBG, "4", editor, three)
		tooLarge("request total", err, "300 bytes together", "limit is 250 bytes per request")

		got := chk(s.GetObject(ctxBG, "4", id(ids[0]), ReadOptions{}))(t)
		for _, v := range got.Values {
			if v.Attribute == sc.title && strings.Contains(string(v.JSON), "b") {
				t.Fatalf("a rejected update was stored: %s", v.JSON)
			}
		}
	})
}

func TestValueLimitsDefaults(t *testing.T) {
	var l ValueLimits
	if err := l.check([]ValueInput{{JSON: make([]byte, DefaultMaxValueBytes)}}); err != nil {
		t.Fatalf("a value of exactly the default limit: %v", err)
	}
	if err := l.check([]ValueInput{{Attribute: 7, JSON: make([]byte, DefaultMaxValueBytes+1)}}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "attribute 7") {
		t.Fatalf("one byte over the default: %v", err)
	}
}
