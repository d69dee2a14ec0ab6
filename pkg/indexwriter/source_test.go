package indexwriter_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestSourceField checks the stored source of an object and of a system
// object: metadata, every effective value with its data type and
// sortReverse.
func TestSourceField(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	s := content.New(st, nil)
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ix, err := indexwriter.New(st, eng, indexwriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.IndexBranch(ctx, content.BranchDefault, 1); err != nil {
		t.Fatal(err)
	}
	api := "lang3"
	two := int64(1)
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage, APIIdentifier: &api,
		Values: []content.ValueInput{vin(1000, 201, "Three"), vin(1000, 202, "Drei"), vin(2002, 0, 201)}}})
	if err != nil {
		t.Fatal(err)
	}
	// Multi-valued refs on an attribute: 1015 on a new attribute.
	_, attrs, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeAttribute,
		Values: []content.ValueInput{vin(1000, 201, "Refs"), vin(1001, 0, "ObjRef"), vin(1004, 0, true),
			vin(1015, 0, 20), {Attribute: 1015, SortReverse: &two, JSON: json.RawMessage("10")}}}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.ClaimOutbox(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if _, err := ix.ApplyPayload(ctx, e.Payload); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(4, ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	src, err := indexdoc.DecodeSource(doc.Fields)
	if err != nil {
		t.Fatal(err)
	}
	if src.ID != ids[0] || src.APIIdentifier != "lang3" || src.TypeRef != content.TypeLanguage || src.GUID == "" ||
		src.LastTransaction < 1 || src.Modified.IsZero() {
		t.Fatalf("meta = %+v", src)
	}
	want := []indexdoc.SourceValue{
		{Attr: 1000, Lang: 201, DataType: "String", Value: json.RawMessage(`"Three"`)},
		{Attr: 1000, Lang: 202, DataType: "String", Value: json.RawMessage(`"Drei"`)},
		{Attr: 2002, DataType: "ObjRef", Value: json.RawMessage(`201`)},
	}
	if got, _ := json.Marshal(src.Values); string(got) != string(must(json.Marshal(want))) {
		t.Fatalf("values = %s\nwant %s", got, must(json.Marshal(want)))
	}
	doc, err = eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(4, attrs[0]))
	if err != nil {
		t.Fatal(err)
	}
	src, _ = indexdoc.DecodeSource(doc.Fields)
	var refs []string
	for _, v := range src.Values {
		if v.Attr == 1015 {
			refs = append(refs, string(v.Value)+"@"+string(must(json.Marshal(v.SortReverse))))
		}
	}
	if len(refs) != 2 || refs[0] != "20@0" || refs[1] != "10@1" {
		t.Fatalf("multi-valued refs = %v", refs)
	}
	// A system object indexed by IndexBranch has a source too.
	doc, err = eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(4, content.AttrFallbackLanguage))
	if err != nil {
		t.Fatal(err)
	}
	if src, err = indexdoc.DecodeSource(doc.Fields); err != nil || src.APIIdentifier != "attributeFallbackLanguage" {
		t.Fatalf("system attribute source = %+v, %v", src, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// bootstrappedStore opens a fresh SQLite store with the system model,
// closed when the test ends.
func bootstrappedStore(t testing.TB) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	return st
}
