package indexwriter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Display names.
//
// An object's display name follows model.DisplayName: the attribute its
// type names through attribute 5005, else attribute 1000, each along the
// language fallback chain (variant 0), the rule pkg/delivery renders
// displayName with. A document holds it as:
//   - indexdoc.FieldHasDisplayName: some variant-0 value of either attribute, in
//     any language;
//   - indexdoc.FieldName: "<lang>=<name>" for every language with a value of either
//     attribute, the name that language alone shows (no fallback);
//   - per indexed language l (Options.Languages): the name l's fallback
//     chain shows, exact (indexdoc.NameField), lower-cased (indexdoc.NameSortField) and
//     analysed (indexdoc.NameTextField), and under indexdoc.NameKey(l) its words in
//     indexdoc.FieldWords and its lower-cased whole in indexdoc.FieldValuesLower, the
//     sources of Index suggestions.
//
// When a type's 5005 value changes, Apply rebuilds the documents of the
// type's objects on every branch the change reaches before it writes the
// type's own document (refreshTypeNames): a retry after a failure still
// sees the old value in the index and rebuilds again.

// objectNames is an object's display name as its document holds it.
type objectNames struct {
	own   map[int64]string // language → the name it alone shows
	shown map[int64]string // indexed language → the name its chain shows
}

// namesOf applies model.DisplayName to o, whose type names nameAttr (0:
// none), in every language o has a name value in and along each chain.
func namesOf(o *resolved, nameAttr int64, chains langChains) objectNames {
	attrs := model.DisplayNameAttributes(nameAttr)
	vals := map[int64]map[int64]string{} // attribute → language → first value
	for _, v := range o.values {
		if v.Variant != 0 || !slices.Contains(attrs, v.AttributeID) {
			continue
		}
		byLang := vals[v.AttributeID]
		if byLang == nil {
			byLang = map[int64]string{}
			vals[v.AttributeID] = byLang
		}
		if _, ok := byLang[v.Language]; !ok {
			byLang[v.Language] = model.DisplayString(v.JSON)
		}
	}
	n := objectNames{own: map[int64]string{}, shown: make(map[int64]string, len(chains))}
	for _, byLang := range vals {
		for lang := range byLang {
			n.own[lang], _ = model.DisplayName(nameAttr, func(a int64) (string, bool) {
				s, ok := vals[a][lang]
				return s, ok
			})
		}
	}
	for l, chain := range chains {
		name, ok := model.DisplayName(nameAttr, func(a int64) (string, bool) {
			for _, c := range chain {
				if s, ok := vals[a][c]; ok {
					return s, true
				}
			}
			return "", false
		})
		if ok {
			n.shown[l] = name
		}
	}
	return n
}

// addNames sets the display-name fields of n on f.
func (ix *Indexer) addNames(f fields, n objectNames) {
	f.set(indexdoc.FieldHasDisplayName, len(n.own) > 0)
	langs := make([]int64, 0, len(n.own))
	for l := range n.own {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, l := range langs {
		f.add(indexdoc.FieldName, strconv.FormatInt(l, 10)+"="+indexdoc.Truncate(n.own[l]))
	}
	shown := make([]int64, 0, len(n.shown))
	for l := range n.shown {
		shown = append(shown, l)
	}
	slices.Sort(shown)
	for _, l := range shown {
		x := n.shown[l]
		f.set(indexdoc.NameField(l), indexdoc.Truncate(x))
		f.set(indexdoc.NameSortField(l), indexdoc.Truncate(strings.ToLower(x)))
		text := ix.analysed(x)
		f.set(indexdoc.NameTextField(l), text)
		addWords(f, indexdoc.NameKey(l), text)
		f.add(indexdoc.FieldValuesLower, indexdoc.Truncate(strings.ToLower(indexdoc.NameKey(l)+"="+x)))
	}
}

// typeNames reads the display-name attribute (5005) of types on chain,
// the nearest branch's value winning: one query.
func (ix *Indexer) typeNames(ctx context.Context, chain model.Chain, types []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(types) == 0 {
		return out, nil
	}
	ids := dedup(types)
	slices.Sort(ids)
	vals, err := ix.st.ListValuesIn(ctx, chain.Branches(), ids, store.ValueFilter{AttributeIDs: []int64{model.AttrTypeDisplayName}})
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read display-name attributes: %w", err)
	}
	chain.EachValueGroup(vals, func(group []store.Value, best int64) {
		for _, v := range group {
			if v.Branch != best || model.IsNull(v.JSON) {
				continue
			}
			if a, ok := model.TypeDisplayNameAttribute(v.JSON); ok {
				out[v.ObjectID] = a
			}
		}
	})
	return out, nil
}

// refreshTypeNames rebuilds, on each of targets, the documents of the
// objects of every type among ids (changed on branch by an event of kind)
// whose display-name attribute differs from the one its indexed document
// shows. The event's own objects are left out: the caller writes them
// afterwards. An event only writes rows of branch, so a type whose value
// on branch is unchanged is unchanged on every target: events that change
// no type cost one store read, a type change without a new 5005 value one
// read and one index read per type. A created type has no objects yet.
func (ix *Indexer) refreshTypeNames(ctx context.Context, t tree, branch int64, kind string, ids, targets []int64, v int64, res *ApplyResult) error {
	chain := t.chain(branch)
	if chain == nil || len(ids) == 0 || kind == changes.KindCreated {
		return nil
	}
	rows, err := ix.st.GetObjectsIn(ctx, chain, ids)
	if err != nil {
		return fmt.Errorf("indexwriter: read objects: %w", err)
	}
	var types []int64
	for id, r := range model.NewChain(chain).EffectiveObjects(rows) {
		if r.TypeID == content.RootID {
			types = append(types, id)
		}
	}
	types, err = ix.changedTypeNames(ctx, branch, chain, types)
	if err != nil || len(types) == 0 {
		return err
	}
	skip := make(map[int64]bool, len(ids))
	for _, id := range ids {
		skip[id] = true
	}
	for _, b := range targets {
		bc := t.chain(b)
		if bc == nil {
			continue
		}
		changed, err := ix.changedTypeNames(ctx, b, bc, types)
		if err != nil {
			return err
		}
		for _, typ := range changed {
			ix.log.Info("display-name attribute changed: rebuilding the type's objects", "branch", b, "type", typ, "tx", v)
			if err := ix.indexMatching(ctx, t, b, v, store.ObjectQuery{TypeIDs: []int64{typ}}, res, nil, skip); err != nil {
				return err
			}
		}
	}
	return nil
}

// changedTypeNames returns those of types (sorted) whose display-name
// attribute on branch (with chain) differs in the store from their indexed
// documents.
func (ix *Indexer) changedTypeNames(ctx context.Context, branch int64, chain []int64, types []int64) ([]int64, error) {
	if len(types) == 0 {
		return nil, nil
	}
	slices.Sort(types)
	now, err := ix.typeNames(ctx, model.NewChain(chain), types)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, typ := range types {
		before, err := ix.indexedTypeName(ctx, branch, typ)
		if err != nil {
			return nil, err
		}
		if before != now[typ] {
			out = append(out, typ)
		}
	}
	return out, nil
}

// indexedTypeName is the display-name attribute (5005) of type typ as its
// document on branch shows it; 0 when none or not indexed.
func (ix *Indexer) indexedTypeName(ctx context.Context, branch, typ int64) (int64, error) {
	doc, err := ix.eng.Get(ctx, ix.objects, indexdoc.DocID(branch, typ))
	switch {
	case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("indexwriter: read indexed type %d of branch %d: %w", typ, branch, err)
	}
	src, err := indexdoc.DecodeSource(doc.Fields)
	if err != nil {
		return 0, nil // unreadable: counts as naming none
	}
	for _, sv := range src.Values {
		if sv.Attr == model.AttrTypeDisplayName && sv.Lang == 0 && sv.Variant == 0 {
			a, _ := model.TypeDisplayNameAttribute(sv.Value)
			return a, nil
		}
	}
	return 0, nil
}
