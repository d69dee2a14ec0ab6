package indexwriter_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// largeValue is a string of n bytes that starts with a recognisable word:
// one long token when words is false, else many distinct words.
func largeValue(n int, words bool) string {
	var b strings.Builder
	b.Grow(n)
	b.WriteString("zyxwvbeginning ")
	for i := 0; b.Len() < n; i++ {
		if words {
			b.WriteString("w")
			b.WriteString(strings.Repeat(string(rune('a'+i%26)), 1+i%7))
			b.WriteString(string(rune('a' + (i/26)%26)))
			b.WriteString(" ")
		} else {
			b.WriteString("x")
		}
	}
	return b.String()[:n]
}

// applyLarge stores an object whose name (language 201) is value, applies
// its outbox events to eng and returns the bytes allocated meanwhile.
func applyLarge(t *testing.T, st store.Store, eng search.Engine, opts indexwriter.Options, value string) (*indexwriter.Indexer, int64, uint64) {
	t.Helper()
	ctx := context.Background()
	ix, err := indexwriter.New(st, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The system model's events first, outside the measurement: it is the
	// large value's Apply that is measured, not the bootstrap's.
	boot, err := st.ClaimOutbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range boot {
		if _, err := ix.ApplyPayload(ctx, e.Payload); err != nil {
			t.Fatal(err)
		}
	}
	s := content.New(st, nil, content.WithValueLimits(content.ValueLimits{MaxValueBytes: 64 << 20, MaxRequestValueBytes: 64 << 20}))
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
		Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, value)}}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.ClaimOutbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, e := range evs {
		if _, err := ix.ApplyPayload(ctx, e.Payload); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return ix, ids[0], after.TotalAlloc - before.TotalAlloc
}

// TestLargeValue indexes a 4 MB value (one token, and many words) on Bleve
// and, with CMS_ELASTICSEARCH_URL, on Elasticsearch: the allocations of
// the Apply stay under 50x the value (they were ~600x and ~900x on Bleve)
// and the object is found by the value's first word.
func TestLargeValue(t *testing.T) {
	engines := map[string]func(t *testing.T) search.Engine{
		"bleve":   func(t *testing.T) search.Engine { return openBleve(t, "") },
		"elastic": func(t *testing.T) search.Engine { return openElastic(t) },
	}
	for engName, open := range engines {
		for _, words := range []bool{false, true} {
			name := engName + "/" + map[bool]string{false: "one token", true: "words"}[words]
			t.Run(name, func(t *testing.T) {
				largeValueCase(t, open(t), words)
			})
		}
	}
}

func largeValueCase(t *testing.T, eng search.Engine, words bool) {
	const size = 4 << 20
	ix, id, alloc := applyLarge(t, bootstrappedStore(t), eng, indexwriter.Options{}, largeValue(size, words))
	t.Logf("%d bytes allocated for a %d byte value (%.1fx)", alloc, size, float64(alloc)/size)
	if alloc > 50*size {
		t.Errorf("allocated %d bytes for a %d byte value: more than 50x", alloc, size)
	}
	if err := eng.Refresh(context.Background(), ix.ObjectsIndex()); err != nil {
		t.Fatal(err)
	}
	r, err := eng.Search(context.Background(), search.SearchRequest{Index: ix.ObjectsIndex(),
		Query: search.Match{Field: indexdoc.FieldFullText, Text: "zyxwvbeginning"}, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 1 || r.Hits[0].ID != indexdoc.DocID(4, id) {
		t.Fatalf("search by the beginning: %d hits", len(r.Hits))
	}
}

// TestMaxIndexedChars: words beyond Options.MaxIndexedChars are not
// indexed, the ones before are.
func TestMaxIndexedChars(t *testing.T) {
	eng := openBleve(t, "")
	ix, _, _ := applyLarge(t, bootstrappedStore(t), eng, indexwriter.Options{MaxIndexedChars: 12}, "früh äpfel late")
	for word, want := range map[string]int{"äpfel": 1, "late": 0} {
		for _, field := range []string{indexdoc.FieldFullText, indexdoc.NameTextField(content.LanguageEnUS)} {
			r, err := eng.Search(context.Background(), search.SearchRequest{Index: ix.ObjectsIndex(),
				Query: search.Match{Field: field, Text: word}, Size: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Hits) != want {
				t.Errorf("%s in %s: %d hits, want %d", word, field, len(r.Hits), want)
			}
		}
	}
}
