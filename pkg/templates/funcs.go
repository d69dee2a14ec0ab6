package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/templates/sandbox"
	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/text/language"
)

// Data is what a template renders over ({{.Objects}}, {{.Object}}, …).
type Data struct {
	// Objects are the objects the render was asked for (or the ones a
	// calling template passed), in order.
	Objects []*Object
	// Object is the first of Objects (nil when there are none).
	Object *Object
	// Language is the ISO code of the render language, e.g. "de-DE".
	Language string
	// Culture formats dates and numbers (uiCulture, else Language).
	Culture string
	// Parameters are the request's name=value parameters.
	Parameters map[string]string
}

// run is one render: its loader, chains, culture and the templates on
// the call stack (the outermost first).
type run struct {
	s        *Service
	ctx      context.Context
	ld       *loader
	langs    []int64 // language chain, ending with 0
	variants []int64 // variant chain, ending with 0
	culture  language.Tag
	data     Data
	stack    []int64 // ids of the templates being rendered
	// compiled holds the templates called so far, by call stack (shared
	// by the whole render).
	compiled map[string]*sandbox.Template
}

// xhtmlPolicy sanitizes XHTML values inserted with xhtml: the user
// generated content policy (no script, no event handlers, no javascript:
// URLs, no style attributes).
var xhtmlPolicy = bluemonday.UGCPolicy()

// attributeFuncs are the functions whose second argument names an
// attribute.
var attributeFuncs = []string{"value", "values", "xhtml", "ref", "refs"}

// funcs is the template function set of r (docs/rendering.md lists it).
func (r *run) funcs() template.FuncMap {
	return template.FuncMap{
		"value":  r.value,
		"values": r.values,
		"xhtml":  r.xhtml,
		"ref":    r.ref,
		"refs":   r.refs,
		"name":   r.name,
		"object": r.object,
		"number": r.number,
		"date":   r.date,
		"render": r.render,
		"param":  func(name string) string { return r.data.Parameters[name] },
	}
}

// selected returns o's values of attr along the variant and language
// chains (model.Fallback): the first (variant, language) that has any.
func (r *run) selected(o *Object, attr string) ([]content.Value, error) {
	if o == nil {
		return nil, nil
	}
	id, err := r.ld.attribute(r.ctx, attr)
	if err != nil {
		return nil, err
	}
	return r.selectedID(o, id), nil
}

// selectedID is selected for an attribute id.
func (r *run) selectedID(o *Object, attr int64) []content.Value {
	var out []content.Value
	model.Fallback(r.variants, r.langs, func(va, l int64) bool {
		for _, v := range o.values {
			if v.Attribute == attr && v.Language == l && v.Variant == va {
				out = append(out, v)
			}
		}
		return len(out) > 0
	})
	return out
}

// decode is a stored value as a template sees it: string, float64, bool.
func decode(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// value is the first value of attr on o along the fallback; nil when o is
// nil or has none.
func (r *run) value(o *Object, attr string) (any, error) {
	vs, err := r.selected(o, attr)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	return decode(vs[0].JSON), nil
}

// values are all values of attr on o along the fallback (multi-valued
// attributes).
func (r *run) values(o *Object, attr string) ([]any, error) {
	vs, err := r.selected(o, attr)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = decode(v.JSON)
	}
	return out, nil
}

// xhtml is the first value of attr as sanitized HTML (XHTML values); ""
// when there is none. (html is html/template's own escaper.)
func (r *run) xhtml(o *Object, attr string) (template.HTML, error) {
	v, err := r.value(o, attr)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	return template.HTML(xhtmlPolicy.Sanitize(s)), nil //nolint:gosec // sanitized
}

// refOf reads a JSON number as an object id.
func refOf(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil && id > 0
}

// refs are the live objects attr refers to from o, in order. The targets
// of attr are read for every loaded object at once, so a list renders
// with one read per reference attribute, not one per object.
func (r *run) refs(o *Object, attr string) ([]*Object, error) {
	vs, err := r.selected(o, attr)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	var want []int64
	for _, v := range vs {
		if id, ok := refOf(v.JSON); ok {
			want = append(want, id)
		}
	}
	if err := r.prefetch(attr, want); err != nil {
		return nil, err
	}
	out := make([]*Object, 0, len(want))
	for _, id := range want {
		if t := r.ld.byID[id]; t != nil && !t.Deleted {
			out = append(out, t)
		}
	}
	return out, nil
}

// prefetch reads want and, in the same read, the targets of attr on every
// other loaded object.
func (r *run) prefetch(attr string, want []int64) error {
	missing := slices.ContainsFunc(want, func(id int64) bool { return r.ld.byID[id] == nil && !r.ld.missing[id] })
	if !missing {
		return nil
	}
	ids := append([]int64{}, want...)
	loaded := make([]*Object, 0, len(r.ld.byID))
	for _, x := range r.ld.byID {
		loaded = append(loaded, x)
	}
	for _, x := range loaded {
		vs, err := r.selected(x, attr)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if id, ok := refOf(v.JSON); ok && len(ids) < r.ld.max-r.ld.reads {
				ids = append(ids, id)
			}
		}
	}
	return r.ld.byIDs(r.ctx, ids)
}

// ref is the first object attr refers to from o (nil: none).
func (r *run) ref(o *Object, attr string) (*Object, error) {
	out, err := r.refs(o, attr)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return out[0], nil
}

// name is o's display name (model.DisplayName along the fallback).
func (r *run) name(o *Object) (string, error) {
	if o == nil {
		return "", nil
	}
	nameAttr, err := r.ld.displayNameAttr(r.ctx, o.TypeID)
	if err != nil {
		return "", err
	}
	name, _ := model.DisplayName(nameAttr, func(attr int64) (string, bool) {
		if vs := r.selectedID(o, attr); len(vs) > 0 {
			return model.DisplayString(vs[0].JSON), true
		}
		return "", false
	})
	return name, nil
}

// object reads one object by id, GUID or ApiIdentifier.
func (r *run) object(ident any) (*Object, error) {
	s, err := identString(ident)
	if err != nil {
		return nil, err
	}
	objs, err := r.ld.objects(r.ctx, []string{s})
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// identString is an identifier given to a function: a string, or a number
// (an id).
func identString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10), nil
		}
	case *Object:
		if x != nil {
			return strconv.FormatInt(x.ID, 10), nil
		}
	}
	return "", fmt.Errorf("%v is no object identifier", v)
}
