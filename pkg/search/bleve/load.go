package bleve

import (
	"fmt"
	"slices"

	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/cmsplatform/cms/pkg/search"
)

// reader opens a point-in-time reader of the index; the caller closes it.
func (ix *index) reader() (bleveindex.IndexReader, error) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, fmt.Errorf("bleve: reader: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("bleve: reader: %w", err)
	}
	return r, nil
}

// load reads document id through r: its version from the version store
// (versions.go), its fields from the decoded-document cache or, on
// a miss, from the stored source. ok is false when the document does not
// exist (never written, or deleted).
func (ix *index) load(r bleveindex.IndexReader, id string) (doc search.Document, ok bool, err error) {
	return ix.loadFields(r, id, nil)
}

// loadFields is load returning only the fields named in names (all of
// them when names is nil). The cache keeps whole documents: a document
// read whole is decoded and kept, one read for some fields is served from
// the cache when it is there and otherwise decoded for those fields only.
func (ix *index) loadFields(r bleveindex.IndexReader, id string, names []string) (doc search.Document, ok bool, err error) {
	rec, ok, err := ix.version(r, id)
	if err != nil {
		return search.Document{}, false, err
	}
	return ix.loadAt(r, id, rec, ok, names)
}

// loadEach loads the documents ids through r as loadFields does, their
// versions read in one transaction of the version store (a page of hits
// costs one, not one per hit), and calls fn with each in turn; found is
// false for one that does not exist.
// A document the caller holds (held, see search.SearchRequest.Held) is
// passed without its fields.
func (ix *index) loadEach(r bleveindex.IndexReader, ids []string, names []string, held func(string, int64) bool, fn func(d search.Document, found bool)) error {
	recs, known, err := ix.versionsOf(r, ids)
	if err != nil {
		return err
	}
	for i, id := range ids {
		d, found, err := ix.loadUnlessHeld(r, id, recs[i], known[i], names, held)
		if err != nil {
			return err
		}
		fn(d, found)
	}
	return nil
}

// loadUnlessHeld is loadAt, but a document whose version the caller holds
// (held reports it; nil: none) is returned without its fields, neither
// read from the index nor decoded.
func (ix *index) loadUnlessHeld(r bleveindex.IndexReader, id string, rec versionRec, known bool, names []string, held func(string, int64) bool) (doc search.Document, ok bool, err error) {
	if held != nil && known && !rec.deleted && held(id, rec.ver) {
		return search.Document{ID: id, Version: rec.ver}, true, nil
	}
	return ix.loadAt(r, id, rec, known, names)
}

// loadAt is loadFields for a version record already read (known false:
// none).
func (ix *index) loadAt(r bleveindex.IndexReader, id string, rec versionRec, known bool, names []string) (doc search.Document, ok bool, err error) {
	if !known || rec.deleted {
		return search.Document{}, false, nil // unknown or tombstone
	}
	ver := rec.ver
	if fields, hit := ix.docs.get(id, ver, names); hit {
		return search.Document{ID: id, Version: ver, Fields: fields}, true, nil
	}
	d, err := r.Document(id)
	if err != nil {
		return search.Document{}, false, fmt.Errorf("bleve: get %q: %w", id, err)
	}
	if d == nil {
		return search.Document{}, false, nil
	}
	var src []byte
	stored := int64(-1)
	d.VisitFields(func(f bleveindex.Field) {
		switch f.Name() {
		case fieldSource:
			src = f.Value()
		case fieldVersion:
			stored = parseVersion(f.Value())
		}
	})
	if stored < 0 {
		return search.Document{}, false, fmt.Errorf("bleve: document %q has no version", id)
	}
	if names != nil {
		// Only the named fields are decoded, and not cached (the cache
		// keeps whole documents). The one caller selecting fields,
		// Delivery, reads the stored source alone and keeps what it
		// decodes from it by version (search.SearchRequest.Held): decoding
		// and caching the whole document too cost it about a hundred
		// allocations per document read and a second copy in memory.
		fields, err := ix.mapping.DecodeSourceFields(src, names)
		if err != nil {
			return search.Document{}, false, err
		}
		return search.Document{ID: id, Version: stored, Fields: fields}, true, nil
	}
	fields, err := ix.mapping.DecodeSource(src)
	if err != nil {
		return search.Document{}, false, err
	}
	ix.docs.put(id, stored, fields, len(src))
	return search.Document{ID: id, Version: stored, Fields: fields}, true, nil
}

func parseVersion(b []byte) int64 {
	if len(b) == 0 {
		return -1
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

// searchIDs answers a bare ids query (default order, no aggregations) by
// direct lookups instead of a search: hits by id ascending, score 1.
func (ix *index) searchIDs(ids search.IDs, from, size int, names []string, held func(string, int64) bool) (search.SearchResult, error) {
	sorted := []string(ids) // only read: a copy only to sort (one id, or ids in order, need none)
	if !increasing(sorted) {
		sorted = slices.Compact(slices.Sorted(slices.Values(sorted)))
	}
	r, err := ix.reader()
	if err != nil {
		return search.SearchResult{}, err
	}
	defer r.Close()
	recs, known, err := ix.versionsOf(r, sorted)
	if err != nil {
		return search.SearchResult{}, err
	}
	var out search.SearchResult
	if n := min(size, len(sorted)-from); n > 0 {
		out.Hits = make([]search.Hit, 0, n)
	}
	for i, id := range sorted {
		// Only the requested page is decoded; the rest is only counted.
		inPage := out.Total >= int64(from) && out.Total < int64(from+size)
		if !inPage {
			if known[i] && !recs[i].deleted {
				out.Total++
			}
			continue
		}
		d, ok, err := ix.loadUnlessHeld(r, id, recs[i], known[i], names, held)
		if err != nil {
			return search.SearchResult{}, err
		}
		if !ok {
			continue
		}
		out.Total++
		out.Hits = append(out.Hits, search.Hit{ID: d.ID, Version: d.Version, Score: 1, Fields: d.Fields})
	}
	return out, nil
}

// increasing reports whether ids are sorted without repeats.
func increasing(ids []string) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			return false
		}
	}
	return true
}
