package indexwriter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Display-name language fallback.
//
// The per-language display-name fields (indexdoc.NameField, indexdoc.NameSortField,
// indexdoc.NameTextField) of language l hold the name that a reader asking for l
// is shown (displayname.go): the object's own display-name value (variant
// 0) in l, else the value in l's fallback language (attribute 2002 of the language
// object, followed transitively, cycles cut, at most MaxFallbackDepth
// languages), else the language-independent value (language 0). This is
// the chain pkg/delivery walks when it renders displayName (and the Index
// group's displayName falls back along it too), so a sort on
// indexdoc.NameSortField(l) orders objects by the names shown in l, and the engine
// can sort without fetching every match. indexdoc.FieldName keeps every language's
// own value ("<lang>=<name>"), unaffected by fallbacks.
//
// The fallbacks are read from the language objects (type 20) visible on
// the document's branch: one store read of every language object and its
// 2002 values per tree (that is, per Apply, IndexBranch, Rebuild or
// BuildDocuments call), never per document or batch.
//
// When a change event touches a language object, Apply compares, on each
// branch the event reaches, the fallback chains of Options.Languages
// before (from the indexed language documents) and after the change (from
// the store) and, if they differ, rebuilds every document of the branch
// before writing the language documents themselves: a retry after a
// failure still sees the old chains and rebuilds again. For the
// comparison to be sound, a language document must never be written
// with a newer state than the documents of its pass were built with:
// Apply checks every language object it writes against the state it
// loaded and starts over when they differ (errLanguagesChanged). (Rebuild
// and IndexBranch do not check; a change during them is repaired by its
// event, which the running indexer applies to the new index too.) The
// rebuild runs
// inside Apply (the event is acknowledged after it): with many objects on
// the branch, a fallback change holds up the events behind it for the
// time of an IndexBranch. Language renames and other changes that keep
// the chains rebuild nothing. Documents built before fallbacks were
// indexed (or by an indexer with other Options.Languages) need
// `cms reindex`.
//
// The names follow model.DisplayName (displayname.go): the type's
// display-name attribute (5005), else 1000, variant 0. Display names of
// variants are not covered: pkg/delivery sorts those in memory.

// MaxFallbackDepth caps a language fallback chain (model.MaxFallbackDepth).
const MaxFallbackDepth = model.MaxFallbackDepth

// languages is the language objects of every live branch, read lazily once
// per tree; chains are resolved per branch on demand.
type languages struct {
	mu       sync.Mutex
	loaded   bool
	strict   bool           // check: Apply sets it (see errLanguagesChanged)
	ids      map[int64]bool // every language object id stored on some branch
	rows     []store.Object
	vals     []store.Value // attribute 2002 values
	byBranch map[int64]*branchLangs
}

// branchLangs is the language objects as seen on one branch.
type branchLangs struct {
	live     map[int64]bool  // language id → visible and not deleted
	fallback map[int64]int64 // language id → its 2002 value
	created  map[int64]int64 // language id → CreatedTx of the visible row
	chains   langChains      // of Options.Languages
}

// langChains maps each indexed display-name language to its fallback chain
// (itself first, 0 last).
type langChains map[int64][]int64

func newLanguages() *languages {
	return &languages{byBranch: map[int64]*branchLangs{}}
}

// load reads the language objects and their fallback values of every live
// branch of t: two queries.
func (ls *languages) load(ctx context.Context, st store.Reader, t tree) error {
	if ls.loaded {
		return nil
	}
	branches := t.Branches()
	ls.ids = map[int64]bool{}
	if len(branches) > 0 {
		rows, err := st.ListObjectsIn(ctx, branches, store.ObjectQuery{TypeIDs: []int64{content.TypeLanguage}})
		if err != nil {
			return fmt.Errorf("indexwriter: list languages: %w", err)
		}
		ls.rows = rows
		var ids []int64
		for _, r := range rows {
			if !ls.ids[r.ID] {
				ls.ids[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
		if len(ids) > 0 {
			vals, err := st.ListValuesIn(ctx, branches, ids, store.ValueFilter{AttributeIDs: []int64{content.AttrFallbackLanguage}})
			if err != nil {
				return fmt.Errorf("indexwriter: read language fallbacks: %w", err)
			}
			ls.vals = vals
		}
	}
	ls.loaded = true
	return nil
}

// errLanguagesChanged: a language object being indexed differs from the
// language state the pass loaded (a change committed meanwhile). Written
// as is, its document would claim the new state for documents built with
// the old one, and the change's own event would find nothing to rebuild;
// Apply therefore starts over with a fresh load instead.
var errLanguagesChanged = errors.New("indexwriter: language objects changed during the pass")

// check returns errLanguagesChanged (in strict mode) if a language object
// of objs on bl's chains differs from bl, the state its branch's
// documents are built with. (A language off the chains can only join
// them through a change of one on them, which this check or the
// comparison of its event catches.)
func (ls *languages) check(bl *branchLangs, objs map[int64]*resolved) error {
	if !ls.strict {
		return nil
	}
	for id, o := range objs {
		// Only the languages on the chains shape the documents.
		if o.row.TypeID != content.TypeLanguage || !bl.chains.has(map[int64]bool{id: true}) {
			continue
		}
		var fb int64
		for _, v := range o.values {
			if v.AttributeID == content.AttrFallbackLanguage && v.Language == 0 && v.Variant == 0 {
				fb, _ = strconv.ParseInt(string(bytes.TrimSpace(v.JSON)), 10, 64)
			}
		}
		if bl.live[id] != !o.row.Deleted || bl.fallback[id] != fb {
			return fmt.Errorf("%w: language %d", errLanguagesChanged, id)
		}
	}
	return nil
}

// langsOn returns the language objects as seen on branch.
func (ix *Indexer) langsOn(ctx context.Context, t tree, branch int64) (*branchLangs, error) {
	ls := t.langs
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if bl, ok := ls.byBranch[branch]; ok {
		return bl, nil
	}
	if err := ls.load(ctx, ix.st, t); err != nil {
		return nil, err
	}
	chain := model.NewChain(t.chain(branch))
	// The language rows visible on branch: the nearest branch's row wins.
	var visible []store.Object
	for _, r := range ls.rows {
		if chain.Contains(r.Branch) {
			visible = append(visible, r)
		}
	}
	best := chain.EffectiveObjects(visible)
	bl := &branchLangs{live: map[int64]bool{}, fallback: map[int64]int64{}, created: map[int64]int64{}}
	for id, r := range best {
		bl.live[id] = !r.Deleted
		bl.created[id] = r.CreatedTx
	}
	// The nearest branch's 2002 value wins; a null there clears it.
	fb := bl.fallback
	fbFrom := map[int64]int64{} // language id → the branch its 2002 value is from
	for _, v := range ls.vals {
		if !chain.Contains(v.Branch) || v.Language != 0 || v.Variant != 0 {
			continue
		}
		if cur, ok := fbFrom[v.ObjectID]; ok && !chain.Nearer(v.Branch, cur) {
			continue
		}
		fbFrom[v.ObjectID] = v.Branch
		fb[v.ObjectID] = 0
		if id, err := strconv.ParseInt(string(bytes.TrimSpace(v.JSON)), 10, 64); err == nil {
			fb[v.ObjectID] = id
		}
	}
	bl.chains = fallbackChains(ix.opts.Languages, bl.live, fb)
	ls.byBranch[branch] = bl
	return bl, nil
}

// fallbackChains follows fallback (language → its 2002 value) from each
// of langs through the languages live on the branch (model.LanguageChain).
func fallbackChains(langs []int64, live map[int64]bool, fallback map[int64]int64) langChains {
	out, _ := walkChains(langs, func(id int64) (bool, int64, error) { return live[id], fallback[id], nil })
	return out
}

// walkChains is fallbackChains reading each language's state (live, its
// 2002 value) from state, which is called only for the languages on the
// chains.
func walkChains(langs []int64, state func(id int64) (bool, int64, error)) (langChains, error) {
	out := make(langChains, len(langs))
	for _, l := range langs {
		chain, err := model.LanguageChain(l, state)
		if err != nil {
			return nil, err
		}
		out[l] = chain
	}
	return out, nil
}

func (c langChains) equal(o langChains) bool {
	if len(c) != len(o) {
		return false
	}
	for l, ch := range c {
		if !slices.Equal(ch, o[l]) {
			return false
		}
	}
	return true
}

// has reports whether some chain contains one of ids.
func (c langChains) has(ids map[int64]bool) bool {
	for _, ch := range c {
		for _, id := range ch {
			if ids[id] {
				return true
			}
		}
	}
	return false
}

// indexedChains reads the fallback chains of Options.Languages on branch
// from the language documents in the objects index (a Get per language on
// the chains): the state before the event v being applied rewrites them.
// A language the store has but the index lacks counts as absent before if
// the store created it in v or later and older documents exist
// (indexedBefore: they may predate it), else as the store has it (a fresh
// index, or the index is behind, e.g. events applied out of order: no
// evidence of a change). An unreadable document counts as absent, so the
// branch is rebuilt.
func (ix *Indexer) indexedChains(ctx context.Context, branch, v int64, now *branchLangs, indexedBefore bool) (langChains, error) {
	return walkChains(ix.opts.Languages, func(id int64) (bool, int64, error) {
		doc, err := ix.eng.Get(ctx, ix.objects, indexdoc.DocID(branch, id))
		switch {
		case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
			if now.live[id] && !(indexedBefore && now.created[id] >= v) {
				return true, now.fallback[id], nil
			}
			return false, 0, nil
		case err != nil:
			return false, 0, fmt.Errorf("indexwriter: read indexed language %d of branch %d: %w", id, branch, err)
		}
		src, err := indexdoc.DecodeSource(doc.Fields)
		if err != nil || src.TypeRef != content.TypeLanguage {
			return false, 0, nil
		}
		var fb int64
		for _, sv := range src.Values {
			if sv.Attr == content.AttrFallbackLanguage && sv.Lang == 0 && sv.Variant == 0 {
				fb, _ = strconv.ParseInt(string(bytes.TrimSpace(sv.Value)), 10, 64)
			}
		}
		return !src.Deleted, fb, nil
	})
}

// refreshFallbacks rebuilds the documents of every branch in targets whose
// display-name fallback chains the event changes (see the comment at the
// top of this file). The event's own objects are left out: the caller
// writes them afterwards. A chain can only change where a language the
// event touches is on the new chain (the first language whose state
// changed is), so other branches and events cost no index read.
func (ix *Indexer) refreshFallbacks(ctx context.Context, t tree, ids, targets []int64, v int64, res *ApplyResult) error {
	touched := map[int64]bool{}
	for _, id := range ids {
		if ix.isLanguage(ctx, t, id) {
			touched[id] = true
		}
	}
	if len(touched) == 0 {
		return nil
	}
	skip := make(map[int64]bool, len(ids))
	for _, id := range ids {
		skip[id] = true
	}
	cur := int64(-1) // CurrentVersion, read when first needed
	for _, b := range targets {
		now, err := ix.langsOn(ctx, t, b)
		if err != nil {
			return err
		}
		if !now.chains.has(touched) {
			continue
		}
		if cur < 0 {
			// Before the first recorded version there are no older documents.
			if cur, err = ix.CurrentVersion(ctx); err != nil {
				return err
			}
		}
		before, err := ix.indexedChains(ctx, b, v, now, cur > 0)
		if err != nil {
			return err
		}
		if now.chains.equal(before) {
			continue
		}
		ix.log.Info("language fallbacks changed: rebuilding branch", "branch", b, "tx", v)
		if err := ix.indexBranchSkip(ctx, t, b, v, res, nil, skip); err != nil {
			return err
		}
	}
	return nil
}

// isLanguage reports whether id is a language object on some branch.
func (ix *Indexer) isLanguage(ctx context.Context, t tree, id int64) bool {
	ls := t.langs
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if err := ls.load(ctx, ix.st, t); err != nil {
		// Treat as a language: Apply's path then reports the error.
		return true
	}
	return ls.ids[id]
}
