package content

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// bootstrapComment marks the transaction that wrote the system model.
const bootstrapComment = "bootstrap system model"

// systemObject is one bootstrapped object with its values.
type systemObject struct {
	obj    store.Object
	values []store.Value
}

func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with strings, numbers and bools
	}
	return b
}

// systemModel returns every stored system object (the root 0 is virtual).
func systemModel() []systemObject {
	var out []systemObject
	add := func(id, typ int64, api string, vals ...store.Value) {
		for i := range vals {
			vals[i].ObjectID, vals[i].Branch = id, BranchDefault
		}
		out = append(out, systemObject{
			obj:    store.Object{ID: id, Branch: BranchDefault, TypeID: typ, GUID: systemGUID(id), APIIdentifier: api},
			values: vals,
		})
	}
	name := func(s string) store.Value {
		return store.Value{AttributeID: AttrName, Language: LanguageEnUS, JSON: jsonOf(s)}
	}
	val := func(attr int64, v any) store.Value { return store.Value{AttributeID: attr, JSON: jsonOf(v)} }

	add(BranchDefault, TypeBranch, "branchDefault", name("Default"))
	for _, t := range sysTypes {
		add(t.id, RootID, t.api, name(t.api))
	}
	for _, a := range sysAttrs {
		vals := []store.Value{name(a.name), val(AttrDataType, a.dataType)}
		if a.multi {
			vals = append(vals, val(AttrAllowMultiple, true))
		}
		if a.langDep {
			vals = append(vals, val(AttrLanguageDependent, true))
		}
		for i, t := range a.refTypes {
			v := val(AttrReferencedTypes, t)
			v.SortReverse = int64(i)
			vals = append(vals, v)
		}
		add(a.id, TypeAttribute, a.api, vals...)
	}
	for _, l := range sysLanguages {
		vals := []store.Value{name(l.nameEn), val(AttrIsoLanguageCode, l.iso)}
		if l.fallback != 0 {
			vals = append(vals, val(AttrFallbackLanguage, l.fallback))
		}
		add(l.id, TypeLanguage, l.api, vals...)
	}
	for _, d := range sysJobDefinitions {
		add(d.id, TypeJobDefinition, d.api, name(d.name))
	}
	// The media types Delivery's externalBinaryMediaType refers to: named
	// by their MIME type.
	for _, t := range model.MediaTypes {
		add(t.ID, model.TypeMediaType, "", name(t.MIME))
	}
	return out
}

func bootstrap(ctx context.Context, st store.Store) error {
	sys := systemModel()
	ids := make([]int64, len(sys))
	for i, m := range sys {
		ids[i] = m.obj.ID
	}
	have, err := st.GetObjects(ctx, BranchDefault, ids)
	if err != nil {
		return fmt.Errorf("content: bootstrap: %w", err)
	}
	if len(have) == len(sys) {
		return nil
	}
	tx, err := st.Begin(ctx, store.TxMeta{User: "system", Comment: bootstrapComment, Branch: BranchDefault})
	if err != nil {
		return fmt.Errorf("content: bootstrap: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// Re-read inside the transaction: another process may have bootstrapped
	// meanwhile (writes are serialised, so this read is authoritative).
	have, err = tx.GetObjects(ctx, BranchDefault, ids)
	if err != nil {
		return fmt.Errorf("content: bootstrap: %w", err)
	}
	exists := make(map[int64]bool, len(have))
	for _, o := range have {
		exists[o.ID] = true
	}
	var objs []store.Object
	var vals []store.Value
	var created []int64
	for _, m := range sys {
		if exists[m.obj.ID] {
			continue
		}
		objs = append(objs, m.obj)
		vals = append(vals, m.values...)
		created = append(created, m.obj.ID)
	}
	if len(objs) == 0 {
		return nil
	}
	if err := tx.PutObjects(ctx, objs...); err != nil {
		return fmt.Errorf("content: bootstrap objects: %w", err)
	}
	if err := tx.PutValues(ctx, vals...); err != nil {
		return fmt.Errorf("content: bootstrap values: %w", err)
	}
	if err := appendChange(ctx, tx, BranchDefault, changes.KindCreated, created); err != nil {
		return fmt.Errorf("content: bootstrap: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("content: bootstrap: %w", err)
	}
	return nil
}
