package bleve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	blevesearch "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/datetime/flexible"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/truncate"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/cmsplatform/cms/pkg/search"
)

// MaxTokenRunes cuts each token of a text field, as Elasticsearch's
// standard tokenizer splits tokens at its max_token_length of 255.
const MaxTokenRunes = 255

// Internal field names. User fields cannot start with '@'.
const (
	fieldSource  = "@src" // stored JSON of the normalised fields
	fieldVersion = "@ver" // stored decimal version
	fieldPresent = "@f"   // names of the fields a document has (Exists)
	shadowPrefix = "@s:"  // keyword copy of non-keyword values (aggregations)
	analyzerText = "cms_standard"
	// filterTruncate cuts text tokens at MaxTokenRunes.
	filterTruncate = "cms_truncate"
	noDates        = "cms_no_dates" // date parser of dynamic fields (dynamicKeywords)
	keyMapping     = "cms:mapping"
	allField       = "_all" // Bleve's composite field, disabled (indexMapping)
)

// shadowed reports whether aggregations on a field of kind k use a keyword
// copy: Bleve's term facets see numeric and date fields as prefix-coded terms.
func shadowed(k search.Kind) bool {
	return k != search.Keyword && k != search.Text && k != search.Stored
}

type index struct {
	bi       blevesearch.Index
	mapping  search.Mapping
	wmu      sync.Mutex   // serialises version checks with writes
	docs     *docCache    // decoded sources (doccache.go)
	cols     *columns     // structured searches (columns.go)
	versions versionStore // versions and tombstones (versions.go)
	// legacy: records missing from versions may be Bleve internal keys
	// (an index written before the version store).
	legacy bool

	onDisk     bool           // compacted when deletes pile up (compact.go)
	compacting atomic.Bool    // a compaction is running
	bg         sync.WaitGroup // the running compaction
}

func indexMapping(m search.Mapping) (*mapping.IndexMappingImpl, error) {
	im := mapping.NewIndexMapping()
	// Elasticsearch's standard analyzer: word boundaries and lower case, no
	// stop words (Bleve's "standard" would drop English stop words), tokens
	// cut at MaxTokenRunes like its max_token_length: Bleve's dictionary
	// (an FST) costs a few hundred bytes per byte of a term, so one
	// unbroken multi-megabyte token would cost gigabytes.
	if err := im.AddCustomTokenFilter(filterTruncate, map[string]any{
		"type": truncate.Name, "length": float64(MaxTokenRunes),
	}); err != nil {
		return nil, fmt.Errorf("bleve: token filter: %w", err)
	}
	if err := im.AddCustomAnalyzer(analyzerText, map[string]any{
		"type": custom.Name, "tokenizer": unicode.Name, "token_filters": []string{lowercase.Name, filterTruncate},
	}); err != nil {
		return nil, fmt.Errorf("bleve: analyzer: %w", err)
	}
	im.DefaultAnalyzer = analyzerText
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	dm := mapping.NewDocumentStaticMapping()

	// No field keeps term vectors (the positions and offsets of its
	// terms): they serve phrase queries and highlighting, which no search
	// here makes; with the composite "_all" (below) they were about an
	// eighth of the CPU time of a Bulk of 5,000 objects' documents.
	kw := func() *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.DocValues, f.IncludeTermVectors = false, false, true, false
		return f
	}
	stored := func() *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = keyword.Name
		f.Index, f.Store, f.IncludeInAll, f.DocValues = false, true, false, false
		return f
	}
	dm.AddFieldMappingsAt(fieldSource, stored())
	dm.AddFieldMappingsAt(fieldVersion, stored())
	dm.AddFieldMappingsAt(fieldPresent, kw())
	for _, name := range m.Names() {
		var f *mapping.FieldMapping
		switch k := m.Fields[name]; k {
		case search.Stored:
			continue // kept in fieldSource only
		case search.Keyword:
			f = kw()
		case search.Text:
			f = mapping.NewTextFieldMapping()
			f.Analyzer, f.Store, f.IncludeInAll, f.DocValues = analyzerText, false, false, false
			f.IncludeTermVectors = false
		case search.Long, search.Double:
			f = mapping.NewNumericFieldMapping()
		case search.Bool:
			f = mapping.NewBooleanFieldMapping()
		case search.Date:
			f = mapping.NewDateTimeFieldMapping()
		default:
			return nil, fmt.Errorf("%w: kind %q", search.ErrInvalidMapping, k)
		}
		f.Store, f.IncludeInAll = false, false
		dm.AddFieldMappingsAt(name, f)
		if shadowed(m.Fields[name]) {
			dm.AddFieldMappingsAt(shadowPrefix+name, kw())
		}
	}
	if len(m.KeywordPrefixes) > 0 {
		if err := dynamicKeywords(im, dm); err != nil {
			return nil, err
		}
	}
	// No field is in Bleve's composite "_all" (IncludeInAll is off, a
	// Match without a field searches the text fields), so it is not built:
	// Bleve would still compose an empty one per document.
	dm.AddSubDocumentMapping(allField, mapping.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	return im, im.Validate()
}

// dynamicKeywords indexes the fields of search.Mapping.KeywordPrefixes:
// Bleve maps no field by name prefix, so the document mapping becomes
// dynamic, and unmapped strings (Normalize lets only prefixed keyword
// fields through) are indexed whole (keyword analyzer) with doc values
// for sorting. Dynamic strings that parse as dates would be indexed as
// dates: the default date parser is one that parses nothing (explicit
// Date fields get time.Time values and never parse strings).
func dynamicKeywords(im *mapping.IndexMappingImpl, dm *mapping.DocumentMapping) error {
	if err := im.AddCustomDateTimeParser(noDates, map[string]any{
		"type": flexible.Name, "layouts": []any{"\x00cms:no-date\x00"},
	}); err != nil {
		return fmt.Errorf("bleve: date parser: %w", err)
	}
	im.DefaultDateTimeParser = noDates
	im.IndexDynamic, im.DocValuesDynamic, im.StoreDynamic = true, true, false
	dm.Dynamic = true
	dm.DefaultAnalyzer = keyword.Name
	return nil
}

// kind is the kind of a field of the index's mapping ("" if unmapped).
func (ix *index) kind(name string) search.Kind {
	k, _ := ix.mapping.Field(name)
	return k
}

// createIndex creates an index at path ("" = in memory).
func createIndex(path string, m search.Mapping) (*index, error) {
	im, err := indexMapping(m)
	if err != nil {
		return nil, err
	}
	var bi blevesearch.Index
	if path == "" {
		// Scorch without a path keeps its segments in memory; Bleve's
		// MemOnly (upsidedown over a treap) is an order of magnitude slower.
		bi, err = blevesearch.NewUsing("", im, heldType, scorch.Name, nil)
	} else {
		bi, err = blevesearch.NewUsing(path, im, heldType, blevesearch.Config.DefaultKVStore, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("bleve: create index: %w", err)
	}
	raw, err := search.MarshalMapping(m)
	if err == nil {
		err = bi.SetInternal([]byte(keyMapping), raw)
	}
	if err != nil {
		_ = bi.Close()
		return nil, fmt.Errorf("bleve: store mapping: %w", err)
	}
	if path == "" {
		return &index{bi: bi, mapping: m, versions: newMemVersions()}, nil
	}
	return withVersions(bi, path, m, false)
}

// withVersions opens the version store of the on-disk index bi at path;
// existing says the index was opened, not created.
func withVersions(bi blevesearch.Index, path string, m search.Mapping, existing bool) (*index, error) {
	vs, legacy, err := openBoltVersions(path, existing)
	if err != nil {
		_ = bi.Close()
		return nil, err
	}
	return &index{bi: bi, mapping: m, versions: vs, legacy: legacy, onDisk: true}, nil
}

func openIndex(path string) (*index, error) {
	bi, err := blevesearch.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bleve: open %s: %w", path, err)
	}
	raw, err := bi.GetInternal([]byte(keyMapping))
	if err != nil || raw == nil {
		_ = bi.Close()
		return nil, fmt.Errorf("bleve: %s has no cms mapping: %v", path, err)
	}
	m, err := search.UnmarshalMapping(raw)
	if err != nil {
		_ = bi.Close()
		return nil, err
	}
	return withVersions(bi, path, m, true)
}

// close closes Bleve first: that ends a running compaction.
func (ix *index) close() error {
	err := ix.bi.Close()
	ix.bg.Wait()
	return errors.Join(err, ix.versions.close())
}

func (ix *index) bulk(ctx context.Context, ops []search.Op) (search.BulkResult, error) {
	var res search.BulkResult
	docs, mapped, err := ix.prepare(ops)
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	// The stored versions of all ids, read in one transaction of the
	// version store, not one per op.
	ids := make([]string, len(ops))
	for i, op := range ops {
		ids[i] = op.Doc.ID
	}
	stored, _, err := ix.versionsOf(ix.bi, ids)
	if err != nil {
		return search.BulkResult{}, err
	}
	latest := map[string]versionRec{} // versions written by this batch
	w := newBulkWrite(len(ops))
	changes := make([]colChange, 0, len(ops))
	for i, op := range ops {
		id := op.Doc.ID
		cur, ok := latest[id]
		if !ok {
			cur = stored[i]
		}
		if op.Doc.Version <= cur.ver {
			res.Stale++
			continue
		}
		res.Applied++
		deleted := op.Type == search.OpDelete
		latest[id] = versionRec{ver: op.Doc.Version, deleted: deleted}
		if ix.legacy {
			w.internal = append(w.internal, versionKey(id)) // superseded by the version store
		}
		if deleted {
			changes = append(changes, colChange{id: id})
			w.put(id, nil)
			continue
		}
		w.put(id, mapped[i])
		changes = append(changes, colChange{id: id, fields: bleveFields(docs[i])})
	}
	if err := ix.write(w); err != nil {
		return search.BulkResult{}, err
	}
	for id, r := range latest {
		if r.deleted {
			// A read between the batch and the version write below
			// must not answer the deleted document from the cache.
			ix.docs.drop(id)
		}
	}
	// The versions are written after the documents, never before: a crash
	// or a failed write in between leaves a document newer than its
	// recorded version, never a recorded version whose document is
	// missing. Bulk did not return success, so the caller has not
	// acknowledged the events and they are delivered again, in order;
	// applying them again is idempotent (their versions are still newer
	// than the recorded ones, so the same documents are indexed or
	// deleted again and the versions written). Reads of a document take
	// its version from the document itself when they load it (load.go).
	if err := ix.versions.put(latest); err != nil {
		return search.BulkResult{}, err
	}
	ix.cols.update(changes)
	ix.maybeCompact()
	return res, nil
}

// toBleve validates doc and builds what Bleve indexes.
func (ix *index) toBleve(doc search.Document) (map[string]any, error) {
	fields, err := ix.mapping.Normalize(doc)
	if err != nil {
		return nil, err
	}
	src, err := search.EncodeSource(fields)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", search.ErrInvalidDocument, err)
	}
	out := make(map[string]any, 2*len(fields)+3)
	present := make([]string, 0, len(fields))
	for name, v := range fields {
		if ix.kind(name) == search.Stored {
			continue // returned from fieldSource, never indexed
		}
		out[name] = v
		present = append(present, name)
		if !shadowed(ix.kind(name)) {
			continue
		}
		if vals, ok := v.([]any); ok {
			keys := make([]string, 0, len(vals))
			for _, e := range vals {
				keys = append(keys, search.FormatKey(e))
			}
			slices.Sort(keys)
			out[shadowPrefix+name] = slices.Compact(keys)
		} else {
			out[shadowPrefix+name] = search.FormatKey(v)
		}
	}
	out[fieldSource] = string(src)
	out[fieldVersion] = strconv.FormatInt(doc.Version, 10)
	out[fieldPresent] = present
	return out, nil
}

func (ix *index) get(id string) (search.Document, error) {
	r, err := ix.reader()
	if err != nil {
		return search.Document{}, err
	}
	defer r.Close()
	d, ok, err := ix.load(r, id)
	if err != nil {
		return search.Document{}, err
	}
	if !ok {
		return search.Document{}, fmt.Errorf("%w: %q", search.ErrNotFound, id)
	}
	return d, nil
}
