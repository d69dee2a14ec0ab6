package indexwriter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// BuildDocuments returns the ops that bring the documents of objectIDs on
// branch up to date: an upsert per object visible on the branch (values
// inherited along the branch chain included; a soft-deleted object too,
// with indexdoc.FieldDeleted = true), a delete (tombstone) per object that
// is not visible on the branch, or when the branch itself is gone. Every op carries version. Reads are
// batched: per call a handful of queries, whatever the number of objects
// (plus one per distinct, not yet cached modifying transaction).
func (ix *Indexer) BuildDocuments(ctx context.Context, branch, version int64, objectIDs []int64) ([]search.Op, error) {
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return nil, err
	}
	return ix.build(ctx, t, branch, version, objectIDs)
}

// resolved is one object as seen on a branch.
type resolved struct {
	row       store.Object
	branch    int64         // the branch read
	values    []store.Value // effective, nulls dropped, in store order
	local     bool          // row or some value row stored on the branch
	lastLocal int64
}

func (ix *Indexer) build(ctx context.Context, t tree, branch, version int64, ids []int64) ([]search.Op, error) {
	ops := make([]search.Op, 0, len(ids))
	chain := t.chain(branch)
	if chain == nil {
		for _, id := range ids {
			ops = append(ops, search.Delete(indexdoc.DocID(branch, id), version))
		}
		return ops, nil
	}
	order := model.NewChain(chain)
	objs, err := ix.resolve(ctx, order, branch, ids)
	if err != nil {
		return nil, err
	}
	var attrIDs, txIDs, typeIDs []int64
	for _, o := range objs {
		for _, v := range o.values {
			attrIDs = append(attrIDs, v.AttributeID)
		}
		txIDs = append(txIDs, lastTransaction(o))
		typeIDs = append(typeIDs, o.row.TypeID)
	}
	types, err := ix.dataTypes(ctx, order, attrIDs)
	if err != nil {
		return nil, err
	}
	nameAttrs, err := ix.typeNames(ctx, order, typeIDs)
	if err != nil {
		return nil, err
	}
	txs, err := ix.transactions(ctx, txIDs)
	if err != nil {
		return nil, err
	}
	langs, err := ix.langsOn(ctx, t, branch)
	if err != nil {
		return nil, err
	}
	if err := t.langs.check(langs, objs); err != nil {
		return nil, err
	}
	for _, id := range ids {
		o, ok := objs[id]
		if !ok {
			ops = append(ops, search.Delete(indexdoc.DocID(branch, id), version))
			continue
		}
		ops = append(ops, search.Upsert(ix.document(branch, version, o, types, nameAttrs[o.row.TypeID], txs, langs.chains)))
	}
	return ops, nil
}

// resolve reads the effective rows and values of ids on chain: two queries.
func (ix *Indexer) resolve(ctx context.Context, chain model.Chain, branch int64, ids []int64) (map[int64]*resolved, error) {
	rows, err := ix.st.GetObjectsIn(ctx, chain.Branches(), ids)
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read objects: %w", err)
	}
	out := make(map[int64]*resolved, len(ids))
	var visible []int64
	for id, r := range chain.EffectiveObjects(rows) {
		out[id] = &resolved{row: r, branch: branch}
		visible = append(visible, id)
	}
	for _, r := range rows {
		out[r.ID].local = out[r.ID].local || r.Branch == branch
	}
	if len(visible) == 0 {
		return out, nil
	}
	slices.Sort(visible)
	vals, err := ix.st.ListValuesIn(ctx, chain.Branches(), visible, store.ValueFilter{})
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read values: %w", err)
	}
	chain.EachValueGroup(vals, func(group []store.Value, best int64) {
		o := out[group[0].ObjectID]
		if o == nil {
			return
		}
		for _, v := range group {
			if v.Branch == branch {
				o.local = true
				o.lastLocal = max(o.lastLocal, v.ModifiedTx)
			}
			// Secrets (password hashes) never reach any index field.
			if v.Branch == best && !model.IsNull(v.JSON) && !model.SecretAttribute(v.AttributeID) {
				o.values = append(o.values, v)
			}
		}
	})
	return out, nil
}

// lastTransaction follows content's CmsObjectMetadata.lastTransaction: the
// newest local change, else the inherited row's last change.
func lastTransaction(o *resolved) int64 {
	var last int64
	if o.row.Branch == o.branch {
		last = o.row.ModifiedTx
	}
	last = max(last, o.lastLocal)
	if last == 0 {
		last = o.row.ModifiedTx
	}
	return last
}

// dataTypes reads the data type (attribute 1001) of attrs on chain: one query.
func (ix *Indexer) dataTypes(ctx context.Context, chain model.Chain, attrs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(attrs) == 0 {
		return out, nil
	}
	vals, err := ix.st.ListValuesIn(ctx, chain.Branches(), dedup(attrs), store.ValueFilter{AttributeIDs: []int64{content.AttrDataType}})
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read data types: %w", err)
	}
	from := map[int64]int64{} // attribute → the branch its data type is from
	for _, v := range vals {
		var s string
		if json.Unmarshal(v.JSON, &s) != nil {
			continue
		}
		if b, ok := from[v.ObjectID]; !ok || chain.Nearer(v.Branch, b) {
			from[v.ObjectID] = v.Branch
			out[v.ObjectID] = s
		}
	}
	return out, nil
}

// transactions returns the records of ids, cached (they never change).
func (ix *Indexer) transactions(ctx context.Context, ids []int64) (map[int64]store.Transaction, error) {
	out := make(map[int64]store.Transaction, len(ids))
	var missing []int64
	ix.mu.Lock()
	for _, id := range dedup(ids) {
		if t, ok := ix.txCache[id]; ok {
			out[id] = t
		} else if id > 0 {
			missing = append(missing, id)
		}
	}
	ix.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	read, err := ix.st.GetTransactions(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read transactions: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, t := range read {
		out[t.ID] = t
		if len(ix.txCache) >= ix.maxCache {
			clear(ix.txCache)
		}
		ix.txCache[t.ID] = t
	}
	return out, nil
}

// document renders one resolved object; nameAttr is the display-name
// attribute its type names (0: none), chains are the display-name
// fallback chains on branch (fallback.go).
func (ix *Indexer) document(branch, version int64, o *resolved, types map[int64]string, nameAttr int64, txs map[int64]store.Transaction, chains langChains) search.Document {
	f := fields{}
	last := lastTransaction(o)
	f.set(indexdoc.FieldBranch, branch)
	f.set(indexdoc.FieldID, o.row.ID)
	f.set(indexdoc.FieldTypeRef, o.row.TypeID)
	f.set(indexdoc.FieldGUID, o.row.GUID)
	if o.row.APIIdentifier != "" {
		f.set(indexdoc.FieldAPIIdentifier, o.row.APIIdentifier)
	}
	f.set(indexdoc.FieldDeleted, o.row.Deleted)
	f.set(indexdoc.FieldLastTransaction, last)
	f.set(indexdoc.FieldHasLocalValues, o.local)
	var modified time.Time
	if tx, ok := txs[last]; ok {
		modified = tx.Time
		f.set(indexdoc.FieldModified, tx.Time)
		if tx.User != "" {
			// A keyword term longer than the engine's limit fails the whole
			// document (Elasticsearch: 32766 bytes); the user may be any
			// name an internal caller acts for (X-CmsApi-Username).
			f.set(indexdoc.FieldModifiedBy, indexdoc.Truncate(tx.User))
		}
	}
	if src, err := buildSource(o, last, modified, types); err == nil {
		f.set(indexdoc.FieldSource, src)
	} else {
		ix.log.Error("cannot encode object source", "branch", branch, "id", o.row.ID, "err", err)
	}
	for _, v := range o.values {
		key := indexdoc.Key(v.AttributeID, v.Language, v.Variant)
		f.add(indexdoc.FieldKeys, key)
		dt := types[v.AttributeID]
		dec := json.NewDecoder(bytes.NewReader(v.JSON))
		dec.UseNumber()
		var val any
		if dec.Decode(&val) != nil {
			continue
		}
		switch x := val.(type) {
		case string:
			if model.IsMarkup(dt) {
				for _, id := range XMLLinks(x) {
					f.add(indexdoc.FieldXMLLinks, id)
				}
				text := ix.analysed(stripTags(x))
				f.add(indexdoc.FieldFullText, text)
				addWords(f, key, text)
				continue
			}
			f.add(indexdoc.FieldValues, indexdoc.ValueTerm(v.AttributeID, v.Language, v.Variant, x))
			f.add(indexdoc.FieldValuesLower, strings.ToLower(indexdoc.ValueTerm(v.AttributeID, v.Language, v.Variant, x)))
			text := ix.analysed(x)
			f.add(indexdoc.FieldFullText, text)
			addWords(f, key, text)
			if dt == "DateTime" || dt == "DateTime.Date" {
				if tm, ok := indexdoc.ParseDate(x); ok {
					f.add(indexdoc.FieldOrdered, indexdoc.OrderedTerm('d', v.AttributeID, v.Language, v.Variant, indexdoc.EncodeDate(tm)))
				}
			}
		case json.Number:
			canon := canonicalNumber(x)
			f.add(indexdoc.FieldValues, indexdoc.ValueTerm(v.AttributeID, v.Language, v.Variant, canon))
			if model.IsReference(dt) {
				if n, err := x.Int64(); err == nil {
					f.add(indexdoc.FieldRefs, n)
				}
				continue
			}
			if fl, err := x.Float64(); err == nil {
				f.add(indexdoc.FieldOrdered, indexdoc.OrderedTerm('n', v.AttributeID, v.Language, v.Variant, indexdoc.EncodeNumber(fl)))
			}
		case bool:
			f.add(indexdoc.FieldValues, indexdoc.ValueTerm(v.AttributeID, v.Language, v.Variant, strconv.FormatBool(x)))
		}
	}
	addSortKeys(f, o, types, chains)
	ix.addNames(f, namesOf(o, nameAttr, chains))
	return search.Document{ID: indexdoc.DocID(branch, o.row.ID), Version: version, Fields: f.done()}
}

// analysed is the beginning of s that text fields and indexdoc.FieldWords index: at
// most Options.MaxIndexedChars runes, cut at a rune boundary. Stored
// values (indexdoc.FieldSource) keep the whole value; keyword terms are cut at
// indexdoc.MaxTermBytes.
func (ix *Indexer) analysed(s string) string {
	n := ix.opts.MaxIndexedChars
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func canonicalNumber(n json.Number) string {
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if f, err := n.Float64(); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return n.String()
}

func addWords(f fields, key, s string) {
	for _, w := range indexdoc.Words(s) {
		f.add(indexdoc.FieldWords, key+"="+w)
	}
}

// stripTags returns the text of an XHTML fragment (tags dropped, entities
// decoded, whitespace between blocks kept).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
}

// fields accumulates document fields; multi-valued ones are de-duplicated.
type fields map[string]any

func (f fields) set(name string, v any) { f[name] = v }

func (f fields) add(name string, v any) {
	cur, _ := f[name].([]any)
	for _, c := range cur {
		if c == v {
			return
		}
	}
	f[name] = append(cur, v)
}

func (f fields) done() map[string]any { return f }

func dedup(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
