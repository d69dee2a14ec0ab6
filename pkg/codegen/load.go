package codegen

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/model"
)

// # Which types, which attributes
//
// ids=all (or no ids) generates every custom type (not of the system
// model) that has an ApiIdentifier and is not deleted, in id order.
// Otherwise ids lists type ids, Guids or ApiIdentifiers, generated in the
// order given (a repeated one once); any type may be named, system types
// and types without an ApiIdentifier too (NovaDB's document restricts only
// "all" to types with one; their class is named from the display name,
// names.go). An identifier no object has is 404, one that matches two
// objects 422; an object that is no type or a deleted type is 400.
//
// A type's attributes are the content of its forms: the attributes listed
// in formContent (5053) of its create form (5001) and detail forms (5002),
// plus attributeName (1000), exactly the props Delivery returns for it.
// A type whose forms list no attribute (or that has none) takes the
// attributes its objects use instead (also what Delivery returns then),
// read from at most Limits.MaxScan of its objects in id order. Either way
// only attributes with an ApiIdentifier take part (Delivery keys props by
// it, and it names the members); of two with the same ApiIdentifier the
// older (smaller id) is used. Everything is read with inheritance along
// the branch chain, as on the branch itself. A type with the file hash
// (11000) also has the file props Delivery derives with it (11001-11003).

// attrDescription is the attribute the descriptions are read from.
const attrDescription int64 = 1012

// readChunk is the number of ids per content read.
const readChunk = 500

// Limits bound one request.
type Limits struct {
	// MaxIDs caps the identifiers in ids (default 1000); more is 400.
	MaxIDs int
	// MaxScan caps the objects read per type without form content to find
	// the attributes its objects use (default 10000).
	MaxScan int
}

// Defaults of Limits.
const (
	DefaultMaxIDs  = 1000
	DefaultMaxScan = 10000
)

func (l Limits) withDefaults() Limits {
	if l.MaxIDs <= 0 {
		l.MaxIDs = DefaultMaxIDs
	}
	if l.MaxScan <= 0 {
		l.MaxScan = DefaultMaxScan
	}
	return l
}

// Service generates code from the content of a branch.
type Service struct {
	content *content.Service
	limits  Limits
}

// New returns the generator over c.
func New(c *content.Service, l Limits) *Service {
	return &Service{content: c, limits: l.withDefaults()}
}

// Request is one generator call.
type Request struct {
	Branch   string
	Language string
	// IDs is the ids parameter ("" or "all": every custom type).
	IDs string
	// Type, when set, asks for that one type (ids is then ignored).
	Type string
	// Caller is who reads (content.ReadOptions.Caller).
	Caller *auth.Principal
}

// Generate answers r with the source text.
func (s *Service) Generate(ctx context.Context, r Request) (string, error) {
	lang, err := ParseLanguage(r.Language)
	if err != nil {
		return "", err
	}
	idents, err := s.idents(r)
	if err != nil {
		return "", err
	}
	ld := loader{s: s, branch: r.Branch, read: content.ReadOptions{Inherited: true, Caller: r.Caller}}
	schema, err := ld.schema(ctx, idents)
	if err != nil {
		return "", err
	}
	return Generate(lang, schema)
}

// idents returns the identifiers asked for, nil for all custom types.
func (s *Service) idents(r Request) ([]string, error) {
	if r.Type != "" {
		return []string{r.Type}, nil
	}
	if r.IDs == "" || strings.EqualFold(strings.TrimSpace(r.IDs), "all") {
		return nil, nil
	}
	if n := strings.Count(r.IDs, ",") + 1; n > s.limits.MaxIDs {
		return nil, invalidf("ids takes at most %d identifiers, got %d", s.limits.MaxIDs, n)
	}
	ids := content.SplitIdents(r.IDs)
	if len(ids) == 0 {
		return nil, invalidf(`ids holds no identifier (omit it or send "all" for every custom type)`)
	}
	return ids, nil
}

// loader reads the schema of one request.
type loader struct {
	s      *Service
	branch string
	read   content.ReadOptions
}

// schema reads the types named by idents (nil: all custom ones) and their
// attributes.
func (ld loader) schema(ctx context.Context, idents []string) (Schema, error) {
	chain, err := ld.s.content.BranchChain(ctx, ld.branch)
	if err != nil {
		return Schema{}, err
	}
	types, err := ld.types(ctx)
	if err != nil {
		return Schema{}, err
	}
	var emit []content.Object
	if idents == nil {
		for _, t := range types {
			if !content.IsSystemObject(t.ID) && t.APIIdentifier != "" && !t.Deleted {
				emit = append(emit, t)
			}
		}
	} else if emit, err = ld.named(ctx, idents); err != nil {
		return Schema{}, err
	}
	out := Schema{Branch: chain[0]}
	byID := map[int64]content.Object{}
	for _, t := range types {
		byID[t.ID] = t
		if !t.Deleted {
			out.Named = append(out.Named, Type{ID: t.ID, APIIdentifier: t.APIIdentifier})
		}
	}
	attrs, err := ld.attributes(ctx, emit)
	if err != nil {
		return Schema{}, err
	}
	for i := range out.Named {
		t := &out.Named[i]
		o := byID[t.ID]
		t.Name, t.Description = text(o, content.AttrName), text(o, attrDescription)
		for _, id := range attrs.of[t.ID] {
			if a, ok := attrs.defs[id]; ok {
				t.Attributes = append(t.Attributes, a.Attribute)
			}
		}
	}
	for _, t := range emit {
		out.Emit = append(out.Emit, t.ID)
	}
	return out, nil
}

// types lists every type on the branch (objects of the meta-type), deleted
// ones included, in id order.
func (ld loader) types(ctx context.Context) ([]content.Object, error) {
	var out []content.Object
	q := content.ListQuery{ReadOptions: ld.read, Take: content.MaxTake}
	for {
		page, err := ld.s.content.GetTypedObjects(ctx, ld.branch, "root", q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Objects...)
		if page.Continue == "" {
			return out, nil
		}
		q.Continue = page.Continue
	}
}

// named resolves the identifiers asked for to types that can be generated.
func (ld loader) named(ctx context.Context, idents []string) ([]content.Object, error) {
	objs, err := ld.s.content.GetObjects(ctx, ld.branch, idents, ld.read)
	if err != nil {
		return nil, err
	}
	var out []content.Object
	for i, o := range objs {
		switch {
		case o.TypeID != content.RootID || o.ID == content.RootID:
			return nil, invalidf("%q is not an object type", idents[i]) //nolint:gosec // one object per identifier
		case o.Deleted:
			return nil, invalidf("object type %q is deleted", idents[i]) //nolint:gosec // as above
		}
		out = append(out, o)
	}
	return out, nil
}

// attrSet holds the attribute ids per type and their definitions.
type attrSet struct {
	of   map[int64][]int64 // type → attribute ids (unsorted, unique)
	defs map[int64]attrDef
}

// attrDef is an attribute definition as read.
type attrDef struct {
	Attribute
}

// attributes finds the attributes of the types (the rule above) and
// reads their definitions.
func (ld loader) attributes(ctx context.Context, types []content.Object) (attrSet, error) {
	set := attrSet{of: map[int64][]int64{}, defs: map[int64]attrDef{}}
	formsOf := map[int64][]int64{}
	var forms []int64
	for _, t := range types {
		f := refs(t, content.AttrTypeCreateForm, content.AttrTypeDetailForms)
		formsOf[t.ID] = f
		forms = append(forms, f...)
	}
	formObjs, err := ld.objects(ctx, forms)
	if err != nil {
		return set, err
	}
	var all []int64
	for _, t := range types {
		seen := map[int64]bool{}
		add := func(id int64) {
			if !seen[id] {
				seen[id] = true
				set.of[t.ID] = append(set.of[t.ID], id)
				all = append(all, id)
			}
		}
		for _, f := range formsOf[t.ID] {
			if o, ok := formObjs[f]; ok && o.TypeID == content.TypeForm && !o.Deleted {
				for _, a := range refs(o, content.AttrFormContent) {
					add(a)
				}
			}
		}
		if len(seen) > 0 {
			add(content.AttrName)
		} else {
			used, err := ld.used(ctx, t.ID)
			if err != nil {
				return set, err
			}
			for _, a := range used {
				add(a)
			}
		}
		// Delivery gives a binary proxy object's file props with its hash
		// (pkg/delivery, binaryprops.go).
		if seen[model.AttrFileHash] {
			for _, a := range []int64{model.AttrFileName, model.AttrFileMediaType, model.AttrFileThumbnail} {
				add(a)
			}
		}
	}
	defs, err := ld.objects(ctx, all)
	if err != nil {
		return set, err
	}
	for id, o := range defs {
		if o.TypeID == content.TypeAttribute && !o.Deleted && o.APIIdentifier != "" {
			set.defs[id] = definition(o)
		}
	}
	return set, nil
}

// used returns the attributes the first MaxScan objects of type typ use.
func (ld loader) used(ctx context.Context, typ int64) ([]int64, error) {
	seen := map[int64]bool{}
	var out []int64
	q := content.ListQuery{ReadOptions: ld.read, Take: min(content.MaxTake, ld.s.limits.MaxScan)}
	for n := 0; n < ld.s.limits.MaxScan; {
		page, err := ld.s.content.GetTypedObjects(ctx, ld.branch, itoa(typ), q)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Objects {
			for _, v := range o.Values {
				if !seen[v.Attribute] {
					seen[v.Attribute] = true
					out = append(out, v.Attribute)
				}
			}
		}
		n += len(page.Objects)
		if page.Continue == "" {
			break
		}
		q.Continue = page.Continue
	}
	return out, nil
}

// objects reads ids (deduplicated) in chunks; ids that no longer exist
// are left out.
func (ld loader) objects(ctx context.Context, ids []int64) (map[int64]content.Object, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make(map[int64]content.Object, len(ids))
	for chunk := range slices.Chunk(ids, readChunk) {
		objs, err := ld.s.content.GetObjects(ctx, ld.branch, idStrings(chunk), ld.read)
		if errors.Is(err, content.ErrNotFound) {
			objs, err = ld.each(ctx, chunk)
		}
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			out[o.ID] = o
		}
	}
	return out, nil
}

// each reads ids one by one, skipping those not found (a chunk held one).
func (ld loader) each(ctx context.Context, ids []int64) ([]content.Object, error) {
	var out []content.Object
	for _, id := range ids {
		o, err := ld.s.content.GetObject(ctx, ld.branch, itoa(id), ld.read)
		switch {
		case errors.Is(err, content.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func idStrings(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = itoa(id)
	}
	return out
}

// refs returns the reference values of the attributes of o, in order.
func refs(o content.Object, attrs ...int64) []int64 {
	var out []int64
	for _, v := range o.Values {
		if slices.Contains(attrs, v.Attribute) {
			if id, err := strconv.ParseInt(string(v.JSON), 10, 64); err == nil {
				out = append(out, id)
			}
		}
	}
	return out
}

// text returns the value of a text attribute of o: English (en-US), else
// language-independent, else the one of the smallest language id.
func text(o content.Object, attr int64) string {
	var best *content.Value
	rank := func(v *content.Value) int64 {
		switch v.Language {
		case content.LanguageEnUS:
			return -2
		case 0:
			return -1
		}
		return v.Language
	}
	for i := range o.Values {
		v := &o.Values[i]
		if v.Attribute == attr && v.Variant == 0 && (best == nil || rank(v) < rank(best)) {
			best = v
		}
	}
	if best == nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(best.JSON, &s)
	return s
}

// definition reads an attribute definition.
func definition(o content.Object) attrDef {
	d := attrDef{Attribute: Attribute{ID: o.ID, APIIdentifier: o.APIIdentifier,
		Name: text(o, content.AttrName), Description: text(o, attrDescription)}}
	for _, v := range o.Values {
		switch v.Attribute {
		case content.AttrDataType:
			_ = json.Unmarshal(v.JSON, &d.DataType)
		case content.AttrAllowMultiple:
			_ = json.Unmarshal(v.JSON, &d.Multiple)
		case content.AttrLanguageDependent:
			_ = json.Unmarshal(v.JSON, &d.LanguageDependent)
		case content.AttrUnit:
			d.HasUnit = true
		}
	}
	d.RefTypeIDs = refs(o, content.AttrReferencedTypes)
	slices.SortFunc(d.RefTypeIDs, cmp.Compare)
	return d
}
