package content

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// Limits of the history list (ObjectHistory). An entry carries the values
// its transaction changed, old and new, so a page is much heavier than a
// page of objects.
const (
	// DefaultHistoryTake is the page size when a request gives none.
	DefaultHistoryTake = 20
	// MaxHistoryTake caps a page.
	MaxHistoryTake = 100
)

// Kinds of a history entry: what the transaction did to the object row.
const (
	HistoryCreated  = "created"  // the row's first version
	HistoryDeleted  = "deleted"  // the row became a tombstone
	HistoryRestored = "restored" // a tombstone became live again
	HistoryUpdated  = "updated"  // values only, or the ApiIdentifier
)

// HistoryQuery pages an object's history.
type HistoryQuery struct {
	// Caller is who reads (ReadOptions.Caller: user objects are hidden
	// from others).
	Caller   *auth.Principal
	Take     int    // 0 = DefaultHistoryTake; 1..MaxHistoryTake
	Continue string // "" = the newest page
}

// HistoryEntry is one transaction that changed the object on the branch.
type HistoryEntry struct {
	Transaction Transaction
	Kind        string // HistoryCreated, …
	// Changes are the value groups the transaction changed, by attribute,
	// variant and language; a multi-valued group is one change.
	Changes []ValueChange
}

// ValueChange is one (attribute, language, variant) group before and after
// a transaction; an empty side means no value (a JSON null row on a child
// branch is the override that hides the inherited value).
type ValueChange struct {
	Attribute, Language, Variant int64
	Old, New                     []Value
}

// HistoryPage is one page of an object's history, newest first.
type HistoryPage struct {
	Entries  []HistoryEntry
	Continue string // "" on the last page
}

// ObjectHistory lists the transactions that changed the object id of
// branch — its own row and values there, not those it inherits — newest
// first, paged by transaction. Comments and job bookkeeping are no change
// of the object; secret attributes (model.SecretAttribute) are left out.
func (s *Service) ObjectHistory(ctx context.Context, branch, id string, q HistoryQuery) (HistoryPage, error) {
	take, err := historyTake(q.Take)
	if err != nil {
		return HistoryPage{}, err
	}
	v, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return HistoryPage{}, err
	}
	obj, err := s.visibleID(ctx, v, id, ReadOptions{Caller: q.Caller})
	if err != nil {
		return HistoryPage{}, err
	}
	scope := fmt.Sprintf("history/%d/%d", v.branch, obj)
	before, err := decodeToken(q.Continue, scope)
	if err != nil {
		return HistoryPage{}, err
	}
	h, err := s.st.ObjectHistory(ctx, store.HistoryQuery{Branch: v.branch, ObjectID: obj, BeforeTx: before, Limit: take + 1})
	if err != nil {
		return HistoryPage{}, err
	}
	page := HistoryPage{Entries: []HistoryEntry{}}
	if len(h.Transactions) > take {
		h.Transactions = h.Transactions[:take]
		page.Continue = encodeToken(h.Transactions[take-1], scope)
	}
	if len(h.Transactions) == 0 {
		return page, nil
	}
	oldest := h.Transactions[len(h.Transactions)-1]
	prevRows, err := s.st.ObjectsAsOf(ctx, []int64{v.branch}, []int64{obj}, oldest-1)
	if err != nil {
		return HistoryPage{}, err
	}
	prevVals, err := s.st.ValuesAsOf(ctx, []int64{v.branch}, []int64{obj}, oldest-1)
	if err != nil {
		return HistoryPage{}, err
	}
	txs, err := s.st.GetTransactions(ctx, h.Transactions)
	if err != nil {
		return HistoryPage{}, err
	}
	meta := make(map[int64]store.Transaction, len(txs))
	for _, t := range txs {
		meta[t.ID] = t
	}
	page.Entries = replayHistory(h, prevRows, prevVals, meta)
	return page, nil
}

// visibleID resolves id on v for a reader: a user object the caller may
// not read does not exist (ReadOptions.hidesUser).
func (s *Service) visibleID(ctx context.Context, v view, id string, o ReadOptions) (int64, error) {
	ids, err := v.resolve(ctx, []string{id})
	if err != nil {
		return 0, err
	}
	if ids[0] == RootID {
		return 0, invalidf("the root object has no history")
	}
	if o.Caller != nil && !o.Caller.Admin {
		rows, err := v.objects(ctx, ids)
		if err != nil {
			return 0, err
		}
		if rows[ids[0]].TypeID == TypeUser && o.hidesUser(ids[0]) {
			return 0, notFoundf("object %q", id)
		}
	}
	return ids[0], nil
}

// replayHistory walks h from its oldest transaction to its newest, starting
// from the state before it (prevRows, prevVals), and returns the entries
// newest first.
func replayHistory(h store.ObjectChanges, prevRows []store.Object, prevVals []store.Value, meta map[int64]store.Transaction) []HistoryEntry {
	state := map[groupKey]map[int64]store.Value{} // group → sort key → row
	for _, val := range prevVals {
		k := groupKey{val.AttributeID, val.Language, val.Variant}
		if state[k] == nil {
			state[k] = map[int64]store.Value{}
		}
		state[k][val.SortReverse] = val
	}
	var row *store.Object
	if len(prevRows) > 0 {
		row = &prevRows[0]
	}
	rowAt := map[int64]store.Object{}
	for _, r := range h.Rows {
		rowAt[r.ModifiedTx] = r
	}
	valsAt := map[int64][]store.ValueVersion{}
	for _, vv := range h.Values {
		valsAt[vv.Tx] = append(valsAt[vv.Tx], vv)
	}
	out := make([]HistoryEntry, len(h.Transactions))
	for i := len(h.Transactions) - 1; i >= 0; i-- {
		tx := h.Transactions[i]
		t := meta[tx]
		e := HistoryEntry{Kind: HistoryUpdated, Changes: []ValueChange{},
			Transaction: Transaction{ID: tx, Time: t.Time, User: t.User, Comment: t.Comment, Branch: t.Branch}}
		if r, ok := rowAt[tx]; ok {
			switch {
			case row == nil:
				e.Kind = HistoryCreated
			case r.Deleted && !row.Deleted:
				e.Kind = HistoryDeleted
			case !r.Deleted && row.Deleted:
				e.Kind = HistoryRestored
			}
			row = &r
		}
		var touched []groupKey
		for _, vv := range valsAt[tx] {
			k := groupKey{vv.AttributeID, vv.Language, vv.Variant}
			if model.SecretAttribute(k.attr) {
				continue
			}
			if !slices.Contains(touched, k) {
				touched = append(touched, k)
			}
		}
		for _, k := range touched {
			old := groupValues(state[k])
			next := map[int64]store.Value{}
			for sort, val := range state[k] {
				next[sort] = val
			}
			for _, vv := range valsAt[tx] {
				if (groupKey{vv.AttributeID, vv.Language, vv.Variant}) != k {
					continue
				}
				if vv.Deleted {
					delete(next, vv.SortReverse)
				} else {
					next[vv.SortReverse] = store.Value{AttributeID: k.attr, Language: k.lang, Variant: k.variant,
						SortReverse: vv.SortReverse, JSON: vv.JSON, UnitRef: vv.UnitRef}
				}
			}
			state[k] = next
			if nv := groupValues(next); !sameValues(old, nv) {
				e.Changes = append(e.Changes, ValueChange{Attribute: k.attr, Language: k.lang, Variant: k.variant, Old: old, New: nv})
			}
		}
		out[i] = e
	}
	return out
}

// groupValues returns a group's rows as Values ordered by sort key.
func groupValues(g map[int64]store.Value) []Value {
	out := make([]Value, 0, len(g))
	for _, val := range g {
		out = append(out, Value{Attribute: val.AttributeID, Language: val.Language, Variant: val.Variant,
			SortReverse: val.SortReverse, UnitRef: val.UnitRef, JSON: val.JSON})
	}
	slices.SortFunc(out, func(a, b Value) int { return cmp.Compare(a.SortReverse, b.SortReverse) })
	return out
}

// sameValues reports whether two groups hold the same rows.
func sameValues(a, b []Value) bool {
	return slices.EqualFunc(a, b, func(x, y Value) bool {
		return x.SortReverse == y.SortReverse && bytes.Equal(x.JSON, y.JSON) &&
			(x.UnitRef == nil) == (y.UnitRef == nil) && (x.UnitRef == nil || *x.UnitRef == *y.UnitRef)
	})
}

// historyTake reads a history page size (DefaultHistoryTake, 1..MaxHistoryTake).
func historyTake(take int) (int, error) {
	return pageTake(take, DefaultHistoryTake, MaxHistoryTake)
}

// SentAsOf reads the asOf a transport received: absent is 0 (now), a sent
// value must be a transaction id (positive), else ErrInvalid.
func SentAsOf(asOf *int64) (int64, error) {
	if asOf == nil {
		return 0, nil
	}
	if *asOf <= 0 {
		return 0, invalidf("asOf must be a transaction id (a positive integer)")
	}
	return *asOf, nil
}

// checkAsOf checks that asOf names a committed transaction whose state the
// store still keeps: one beyond the newest is ErrInvalid, and so is one
// older than the history retention (WithHistoryRetention), whose versions
// may be pruned.
func (s *Service) checkAsOf(ctx context.Context, asOf int64) error {
	if asOf <= 0 {
		return invalidf("asOf must be a transaction id (a positive integer)")
	}
	last, err := s.st.LastTransactionID(ctx)
	if err != nil {
		return err
	}
	if asOf > last {
		return invalidf("asOf %d is beyond the newest transaction %d", asOf, last)
	}
	t, err := s.st.GetTransaction(ctx, asOf)
	if err != nil {
		return fmt.Errorf("asOf %d: %w", asOf, err)
	}
	if s.historyRetention > 0 && t.Time.Before(time.Now().Add(-s.historyRetention)) {
		return invalidf("asOf %d: transaction of %s is older than the history retention %s",
			asOf, t.Time.Format(time.RFC3339), s.historyRetention)
	}
	return nil
}

// asOfReader reads the object rows and values of a chain as transaction
// asOf left them; everything else (identifiers, the branch tree) is read
// as it is now.
type asOfReader struct {
	store.Reader
	h    store.History
	asOf int64
}

func (r asOfReader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]store.Object, error) {
	return r.h.ObjectsAsOf(ctx, branches, ids, r.asOf)
}

func (r asOfReader) ListValuesIn(ctx context.Context, branches, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(f.AttributeIDs)+len(f.Languages)+len(f.Variants) > 0 {
		return nil, fmt.Errorf("content: a filtered value read as of a transaction")
	}
	return r.h.ValuesAsOf(ctx, branches, ids, r.asOf)
}

// asOf returns v reading as of transaction tx.
func (v view) asOf(h store.History, tx int64) view {
	v.r = asOfReader{Reader: v.r, h: h, asOf: tx}
	return v
}

// existedAsOf returns v reading as of o.AsOf after checking that every
// resolved id had a row on v's chain by then: one that had not is
// ErrNotFound, or with o.SkipMissing becomes missingID in resolved.
func (s *Service) existedAsOf(ctx context.Context, v view, resolved []int64, o ReadOptions) (view, error) {
	then := v.asOf(s.st, o.AsOf)
	var ids []int64
	for _, id := range resolved {
		if id != missingID && id != RootID {
			ids = append(ids, id)
		}
	}
	rows, err := then.objects(ctx, ids)
	if err != nil {
		return view{}, err
	}
	for i, id := range resolved {
		if _, ok := rows[id]; ok || id == missingID || id == RootID {
			continue
		}
		if !o.SkipMissing {
			return view{}, notFoundf("object %d did not exist on branch %d after transaction %d", id, v.branch, o.AsOf)
		}
		resolved[i] = missingID
	}
	return then, nil
}
