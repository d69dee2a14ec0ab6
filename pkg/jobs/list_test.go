package jobs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
)

// TestListFilters: GET /jobs filters by branch, definition, state,
// creator (case-insensitive) and deletion, newest first, in pages joined
// by continue tokens that cover every job exactly once; a token of one
// filter is refused under another.
func TestListFilters(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		b, _, err := e.content.CreateBranch(bg, content.Change{Caller: &auth.Principal{Name: "editor"}},
			[]content.ValueInput{{Attribute: 1000, Language: 201, JSON: json.RawMessage(`"Second"`)}})
		if err != nil {
			t.Fatal(err)
		}
		var all []int64 // creation order
		for i := 0; i < 7; i++ {
			r := jobs.CreateRequest{Definition: 1200 + int64(i%2), Caller: &auth.Principal{Name: "editor"}}
			if i%3 == 0 {
				r.Branch, r.Caller = b.ID, &auth.Principal{Name: "Other"}
			}
			all = append(all, e.create(t, r).ID)
		}
		kill := jobs.RequestKill // a New job killed is Error at once
		if err := e.svc.Update(bg, all[1], "boss", &kill, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Delete(bg, all[2], "boss"); err != nil {
			t.Fatal(err)
		}
		ids := func(q jobs.Query) []int64 {
			t.Helper()
			if q.Take == 0 {
				q.Take = 100
			}
			page, err := e.svc.List(bg, q)
			if err != nil {
				t.Fatal(err)
			}
			out := []int64{}
			for _, j := range page.Jobs {
				out = append(out, j.ID)
			}
			return out
		}
		newest := func(idx ...int) []int64 {
			out := []int64{}
			for i := len(idx) - 1; i >= 0; i-- {
				out = append(out, all[idx[i]])
			}
			return out
		}
		i64 := func(v int64) *int64 { return &v }
		st := func(v int) *int { return &v }
		yes, no := true, false
		for _, c := range []struct {
			name string
			q    jobs.Query
			want []int64
		}{
			{"all", jobs.Query{}, newest(0, 1, 2, 3, 4, 5, 6)},
			{"branch", jobs.Query{Branch: i64(b.ID)}, newest(0, 3, 6)},
			{"definition", jobs.Query{Definition: i64(1201)}, newest(1, 3, 5)},
			{"state", jobs.Query{State: st(jobs.StateError)}, newest(1, 2)},
			{"state new", jobs.Query{State: st(jobs.StateNew)}, newest(0, 3, 4, 5, 6)},
			{"creator", jobs.Query{User: "OTHER"}, newest(0, 3, 6)},
			{"deleted", jobs.Query{Deleted: &yes}, newest(2)},
			{"not deleted", jobs.Query{Deleted: &no}, newest(0, 1, 3, 4, 5, 6)},
			{"trigger", jobs.Query{Trigger: i64(7)}, []int64{}},
			{"combined", jobs.Query{Branch: i64(4), Definition: i64(1200), Deleted: &no}, newest(4)},
			{"caller", jobs.Query{Caller: &auth.Principal{Name: "r", Read: []int64{b.ID}}}, newest(0, 3, 6)},
			{"caller without grants", jobs.Query{Caller: &auth.Principal{Name: "n"}}, []int64{}},
			{"caller filtering another branch", jobs.Query{Branch: i64(4), Caller: &auth.Principal{Name: "r", Read: []int64{b.ID}}}, []int64{}},
		} {
			if got := ids(c.q); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		// Pages of two, joined by continue tokens.
		var paged []int64
		q := jobs.Query{Take: 2}
		for pages := 0; ; pages++ {
			page, err := e.svc.List(bg, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Jobs) > 2 || pages > 4 {
				t.Fatalf("page %d: %d jobs", pages, len(page.Jobs))
			}
			for _, j := range page.Jobs {
				paged = append(paged, j.ID)
			}
			if page.Continue == "" {
				break
			}
			q.Continue = page.Continue
		}
		if want := newest(0, 1, 2, 3, 4, 5, 6); !slices.Equal(paged, want) {
			t.Errorf("paged: %v, want %v", paged, want)
		}
		first, err := e.svc.List(bg, jobs.Query{Take: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.List(bg, jobs.Query{Take: 2, Definition: i64(1200), Continue: first.Continue}); !errors.Is(err, jobs.ErrInvalid) {
			t.Errorf("a token under another filter: %v", err)
		}
	})
}

// TestUserDefinition: a user's own definition of type 120 names a
// built-in kind (jobDefinitionKind) with default parameters
// (jobDefinitionParameters); a job of it runs that kind with the defaults,
// its own parameters winning. A definition naming no built-in kind is
// refused, an object of another type or a deleted definition is not found.
func TestUserDefinition(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "r", nil)
		ch := content.Change{Caller: &auth.Principal{Name: "editor"}}
		_, typ, err := e.content.CreateObjects(bg, "4", ch, []content.ObjectInput{
			{TypeID: content.RootID, APIIdentifier: ptr("gadget")},
			{TypeID: content.RootID, APIIdentifier: ptr("widget")},
		})
		if err != nil {
			t.Fatal(err)
		}
		obj := func(typ int64, name string) content.ObjectInput {
			return content.ObjectInput{TypeID: typ, Values: []content.ValueInput{{Attribute: 1000, Language: 201,
				JSON: json.RawMessage(fmt.Sprintf("%q", name))}}}
		}
		if _, _, err := e.content.CreateObjects(bg, "4", ch, []content.ObjectInput{obj(typ[0], "g1"), obj(typ[0], "g2"), obj(typ[1], "w1")}); err != nil {
			t.Fatal(err)
		}
		def := func(kind, params string) int64 {
			t.Helper()
			vals := []content.ValueInput{{Attribute: content.AttrJobKind, JSON: json.RawMessage(fmt.Sprintf("%q", kind))}}
			if params != "" {
				vals = append(vals, content.ValueInput{Attribute: content.AttrJobParameters, JSON: json.RawMessage(fmt.Sprintf("%q", params))})
			}
			_, ids, err := e.content.CreateObjects(bg, "4", ch, []content.ObjectInput{{TypeID: content.TypeJobDefinition, Values: vals}})
			if err != nil {
				t.Fatal(err)
			}
			return ids[0]
		}
		gadgets := def(jobs.KindExportCSV, `[{"name":"type","values":["gadget"]}]`)
		d, err := e.svc.Definition(bg, 4, gadgets)
		if err != nil || d.Kind != jobs.KindExportCSV || len(d.Defaults) != 1 {
			t.Fatalf("definition %d: %+v %v", gadgets, d, err)
		}
		rows := func(j jobs.Job) int {
			t.Helper()
			j = e.waitDone(t, j.ID)
			if j.State != jobs.StateSucceeded {
				t.Fatalf("job of definition %d: %d %q", j.Definition, j.State, j.StateMessage)
			}
			a, err := e.svc.OpenArtifact(bg, j, "objects.csv", nil)
			body := readAll(t, a.ReadCloser, err)
			return len(strings.Split(strings.TrimSpace(string(body)), "\n")) - 1
		}
		if n := rows(e.create(t, jobs.CreateRequest{Definition: gadgets})); n != 2 {
			t.Errorf("defaults: %d rows, want the 2 gadgets", n)
		}
		own := e.create(t, jobs.CreateRequest{Definition: gadgets, Parameters: []jobs.Parameter{{Name: "type", Values: []string{"widget"}}}})
		if n := rows(own); n != 1 {
			t.Errorf("own parameter: %d rows, want the 1 widget", n)
		}
		if got := own.Param("type"); !slices.Equal(got, []string{"widget"}) || len(own.Parameters) != 1 {
			t.Errorf("merged parameters %+v", own.Parameters)
		}
		for name, id := range map[string]int64{"unknown kind": def("jobMakeCoffee", ""), "bad defaults": def(jobs.KindExportJSON, "{")} {
			if _, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: id}); !errors.Is(err, jobs.ErrInvalid) {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
		if _, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: typ[0]}); !errors.Is(err, jobs.ErrNotFound) {
			t.Errorf("a type as definition: %v", err)
		}
		if _, _, err := e.content.DeleteObjects(bg, "4", ch, []string{fmt.Sprint(gadgets)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: gadgets}); !errors.Is(err, jobs.ErrNotFound) {
			t.Errorf("a deleted definition: %v", err)
		}
	})
}
