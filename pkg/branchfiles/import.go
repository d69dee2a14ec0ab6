package branchfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/model"
)

// DefaultComment is the comment of an import's transactions.
const DefaultComment = "branch import"

// ImportResult says what an import changed. Transactions is the number of
// write transactions it made: 0 when the branch already showed the files.
type ImportResult struct {
	Created, Updated, Unchanged int
	Uploaded                    int
	Transactions                int
}

// Import applies the export in dir to branch: stored files the
// installation lacks are uploaded; an object is matched by its GUID, else
// its ApiIdentifier, and created (with the export's GUID) when neither
// matches, restored when it is deleted, and given the values of its file
// where the branch shows others (an (attribute, language, variant) the file
// does not have is removed; on a child branch that hides the inherited
// value). Objects of the branch no file names are left alone. Types are
// created first, then attributes, then the other objects; references to
// objects created in the same import are written once all exist. An
// object the branch already shows as its file says is not written, so a
// second import of the same files writes no transaction.
func Import(ctx context.Context, c *Client, branch, dir, comment string) (ImportResult, error) {
	var res ImportResult
	if comment == "" {
		comment = DefaultComment
	}
	set, err := ReadDir(dir)
	if err != nil {
		return res, err
	}
	for _, n := range set.Files {
		up, err := putFile(ctx, c, filepath.Join(dir, FilesDir, n), n)
		if err != nil {
			return res, fmt.Errorf("file %s: %w", n, err)
		}
		if up {
			res.Uploaded++
		}
	}
	im := &importer{c: c, branch: branch, comment: comment, set: set, res: &res, counted: map[string]bool{}}
	if im.snap, err = read(ctx, c, branch); err != nil {
		return res, err
	}
	im.index()
	// A deleted type or attribute is restored before objects are created
	// with it.
	restored, err := im.restoreSchema(ctx)
	if err != nil {
		return res, err
	}
	created := restored > 0
	for _, sub := range []string{TypesDir, AttributesDir, ObjectsDir} {
		n, err := im.createMissing(ctx, sub)
		if err != nil {
			return res, err
		}
		created = created || n > 0
	}
	if created {
		if im.snap, err = read(ctx, c, branch); err != nil {
			return res, err
		}
	}
	return res, im.update(ctx)
}

// putFile uploads the stored file n (at p) unless the installation has it.
func putFile(ctx context.Context, c *Client, p, n string) (bool, error) {
	if has, err := c.hasFile(ctx, n); err != nil || has {
		return false, err
	}
	f, err := os.Open(p) //nolint:gosec // a file of the export directory the caller named
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	h := fileHash(n)
	g, err := c.upload(ctx, strings.TrimPrefix(n[len(h):], "."), f, info.Size())
	if err != nil {
		return false, err
	}
	if fileName(g, "") != h {
		return false, fmt.Errorf("stored as %s: the content does not match its name", g)
	}
	return true, nil
}

// importer applies one Set to one branch.
type importer struct {
	c               *Client
	branch, comment string
	set             *Set
	snap            *snapshot
	res             *ImportResult
	// byName are the files' objects by GUID and by ApiIdentifier.
	byName map[string]Object
	// counted are the GUIDs of the objects this import created or
	// restored (counted already when they are written again).
	counted map[string]bool
}

func (im *importer) index() {
	im.byName = map[string]Object{}
	for _, o := range im.set.Objects {
		im.byName[o.GUID] = o
		if o.APIIdentifier != "" {
			im.byName[o.APIIdentifier] = o
		}
	}
}

// match is the branch's object o's file describes, nil when there is none.
func (im *importer) match(o Object) *apiObject {
	if cur, ok := im.snap.byGUID[o.GUID]; ok {
		return cur
	}
	if o.APIIdentifier != "" {
		return im.snap.byAPI[o.APIIdentifier]
	}
	return nil
}

// resolve is the id on the branch of the object files call name: the
// branch's object of that ApiIdentifier or GUID, the match of the file of
// that name, or an object read by that name (one the lists do not hold).
func (im *importer) resolve(ctx context.Context, name string) (int64, bool, error) {
	if name == rootName {
		return typeType, true, nil
	}
	if o, ok := im.snap.byAPI[name]; ok {
		return o.Meta.ID, true, nil
	}
	if o, ok := im.snap.byGUID[name]; ok {
		return o.Meta.ID, true, nil
	}
	if f, ok := im.byName[name]; ok {
		if cur := im.match(f); cur != nil {
			return cur.Meta.ID, true, nil
		}
		return 0, false, nil // created later in this import
	}
	o, found, err := im.c.object(ctx, im.branch, name)
	if err != nil || !found {
		return 0, false, err
	}
	im.snap.add(o)
	return o.Meta.ID, true, nil
}

// isReference reports whether the attribute files call name holds
// references: by its data type in the files, else on the branch.
func (im *importer) isReference(ctx context.Context, name string) (bool, error) {
	if f, ok := im.byName[name]; ok && f.Type == attributeTypeName {
		dt, _ := im.snap.name(attrDataType)
		for _, v := range f.Values {
			var s string
			if v.Attribute == dt && v.Language == "" && v.Variant == "" && json.Unmarshal(v.Value, &s) == nil {
				return model.IsReference(s), nil
			}
		}
		return false, nil
	}
	id, ok, err := im.resolve(ctx, name)
	if err != nil || !ok {
		return false, err
	}
	return model.IsReference(im.snap.dataType(id)), nil
}

// errUnresolved is a name neither the files nor the branch hold.
type errUnresolved struct{ name string }

func (e errUnresolved) Error() string {
	return fmt.Sprintf("%q names no object of the files or the branch", e.name)
}

// wire is v with its names resolved; ok is false when one names an
// object not created yet.
func (im *importer) wire(ctx context.Context, v Value) (apiValue, bool, error) {
	var out apiValue
	ids := []*int64{&out.Attribute, &out.Language, &out.Variant, nil}
	var unit int64
	ids[3] = &unit
	for i, n := range []string{v.Attribute, v.Language, v.Variant, v.Unit} {
		if n == "" {
			continue
		}
		id, ok, err := im.resolve(ctx, n)
		if err != nil || !ok {
			return out, false, err
		}
		*ids[i] = id
	}
	if unit != 0 {
		out.UnitRef = &unit
	}
	sr := v.SortReverse
	out.SortReverse = &sr
	out.Value = compactJSON(v.Value)
	var target string
	if ref, err := im.isReference(ctx, v.Attribute); err != nil {
		return out, false, err
	} else if ref && json.Unmarshal(v.Value, &target) == nil {
		id, ok, err := im.resolve(ctx, target)
		if err != nil || !ok {
			return out, false, err
		}
		out.Value = json.RawMessage(strconv.FormatInt(id, 10))
	}
	return out, true, nil
}

// restoreSchema restores the deleted types and attributes of the branch
// that files describe, in one transaction, and counts them as updated.
func (im *importer) restoreSchema(ctx context.Context) (int, error) {
	var objs []apiObject
	for _, p := range im.set.Paths() {
		if strings.HasPrefix(p, ObjectsDir+"/") {
			continue
		}
		if cur := im.match(im.set.Objects[p]); cur != nil && cur.deleted() {
			live := false
			objs = append(objs, apiObject{Meta: apiMeta{ID: cur.Meta.ID, Deleted: &live}, Values: []apiValue{}})
			im.counted[cur.Meta.GUID] = true
		}
	}
	for _, b := range batches(objs) {
		if err := im.c.update(ctx, im.branch, im.comment, b); err != nil {
			return 0, err
		}
		im.res.Transactions++
	}
	im.res.Updated += len(objs)
	return len(objs), nil
}

// createMissing creates the objects of folder sub the branch does not
// have, with the values whose names resolve already.
func (im *importer) createMissing(ctx context.Context, sub string) (int, error) {
	var objs []apiObject
	for _, p := range im.set.Paths() {
		o := im.set.Objects[p]
		if !strings.HasPrefix(p, sub+"/") || im.match(o) != nil {
			continue
		}
		typ, ok, err := im.resolve(ctx, o.Type)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("%s: type %w", p, errUnresolved{o.Type})
		}
		a := apiObject{Meta: apiMeta{GUID: o.GUID, APIIdentifier: o.APIIdentifier, TypeRef: &typ}, Values: []apiValue{}}
		for _, v := range o.Values {
			w, ok, err := im.wire(ctx, v)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", p, err)
			}
			if ok {
				a.Values = append(a.Values, w)
			}
		}
		objs = append(objs, a)
	}
	done := 0
	for _, b := range batches(objs) {
		ids, err := im.c.create(ctx, im.branch, im.comment, b)
		if err != nil {
			return done, err
		}
		im.res.Transactions++
		for i, id := range ids {
			m := b[i].Meta
			m.ID = id
			im.snap.add(apiObject{Meta: m})
			im.counted[m.GUID] = true
		}
		done += len(b)
	}
	im.res.Created += done
	return done, nil
}

// update writes every object whose file says other than the branch shows
// (the references of objects created before among them).
func (im *importer) update(ctx context.Context) error {
	var patches []apiObject
	for _, p := range im.set.Paths() {
		o := im.set.Objects[p]
		cur := im.match(o)
		if cur == nil {
			return fmt.Errorf("%s: object %s is not on the branch after it was created", p, o.GUID)
		}
		patch, changed, err := im.diff(ctx, o, *cur)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if !changed {
			continue
		}
		patches = append(patches, patch)
		if !im.counted[cur.Meta.GUID] {
			im.res.Updated++
		}
	}
	for _, b := range batches(patches) {
		if err := im.c.update(ctx, im.branch, im.comment, b); err != nil {
			return err
		}
		im.res.Transactions++
	}
	im.res.Unchanged = len(im.set.Objects) - im.res.Created - im.res.Updated
	return nil
}

// valueKey is a value's (attribute, language, variant) as ids.
type valueKey [3]int64

// diff is the patch that makes cur show what o says; changed is false
// when it already does.
func (im *importer) diff(ctx context.Context, o Object, cur apiObject) (apiObject, bool, error) {
	patch := apiObject{Meta: apiMeta{ID: cur.Meta.ID}}
	changed := false
	typ, ok, err := im.resolve(ctx, o.Type)
	if err != nil {
		return patch, false, err
	}
	if !ok || typ != cur.typeRef() {
		return patch, false, fmt.Errorf("object %s has type %d on the branch, the file says %q", o.GUID, cur.typeRef(), o.Type)
	}
	switch {
	case o.APIIdentifier != "" && cur.Meta.APIIdentifier == "":
		patch.Meta.APIIdentifier, changed = o.APIIdentifier, true
	case o.APIIdentifier != cur.Meta.APIIdentifier && o.APIIdentifier != "":
		return patch, false, fmt.Errorf("object %s has the ApiIdentifier %q on the branch, the file says %q (an ApiIdentifier never changes)",
			o.GUID, cur.Meta.APIIdentifier, o.APIIdentifier)
	}
	if cur.deleted() {
		f := false
		patch.Meta.Deleted, changed = &f, true
	}
	want, order := map[valueKey][]apiValue{}, []valueKey{}
	for _, v := range o.Values {
		w, ok, err := im.wire(ctx, v)
		if err != nil {
			return patch, false, err
		}
		if !ok {
			return patch, false, fmt.Errorf("object %s: a value of %q: %w", o.GUID, v.Attribute, unresolvedOf(v))
		}
		k := valueKey{w.Attribute, w.Language, w.Variant}
		if _, seen := want[k]; !seen {
			order = append(order, k)
		}
		want[k] = append(want[k], w)
	}
	have := map[valueKey][]apiValue{}
	var haveOrder []valueKey
	for _, v := range cur.Values {
		k := valueKey{v.Attribute, v.Language, v.Variant}
		if _, seen := have[k]; !seen {
			haveOrder = append(haveOrder, k)
		}
		have[k] = append(have[k], v)
	}
	for _, k := range order {
		if !sameRows(want[k], have[k]) {
			patch.Values, changed = append(patch.Values, want[k]...), true
		}
	}
	for _, k := range haveOrder {
		if _, ok := want[k]; !ok {
			patch.Values = append(patch.Values, apiValue{Attribute: k[0], Language: k[1], Variant: k[2], Value: json.RawMessage("null")})
			changed = true
		}
	}
	return patch, changed, nil
}

// unresolvedOf names the first name of v that resolves to nothing.
func unresolvedOf(v Value) error {
	return errUnresolved{strings.Trim(v.Attribute+" "+v.Language+" "+v.Variant+" "+v.Unit+" "+string(v.Value), " ")}
}

// sameRows reports whether two value rows of one group are the same.
func sameRows(a, b []apiValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(compactJSON(a[i].Value)) != string(compactJSON(b[i].Value)) || ptr(a[i].SortReverse) != ptr(b[i].SortReverse) ||
			ptr(a[i].UnitRef) != ptr(b[i].UnitRef) {
			return false
		}
	}
	return true
}

func ptr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
