package content

import (
	"encoding/json"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// A template is an object of type 150 whose text is the bootstrapped
// TextRef attribute attributeTemplateSource (1280); it round-trips as
// written.
func TestTemplateObjectSource(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		a := chk(s.GetObject(ctxBG, "4", "attributeTemplateSource", ReadOptions{}))(t)
		if a.TypeID != TypeAttribute || a.ID != AttrTemplateSource {
			t.Fatalf("attributeTemplateSource = %+v", a)
		}
		src := `<h1>{{ .Name }}</h1>`
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{{TypeID: TypeRazorView, Values: []ValueInput{
			vin(AttrName, LanguageEnUS, "page"), vin(AttrTemplateSource, 0, src),
		}}}))
		raw, err := st.ListValues(ctxBG, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrTemplateSource}})
		if err != nil || len(raw) != 1 {
			t.Fatalf("stored template source %v, %v", raw, err)
		}
		var got string
		if err := json.Unmarshal(raw[0].JSON, &got); err != nil || got != src {
			t.Fatalf("stored template source %q, %v", got, err)
		}
	})
}
