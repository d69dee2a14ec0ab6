package templates

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/rendercache"
)

// Reader is the part of the Management domain (pkg/content) a render
// reads: the current Management view of a branch.
type Reader interface {
	GetObjects(ctx context.Context, branch string, ids []string, o content.ReadOptions) ([]content.Object, error)
	GetTypedObjects(ctx context.Context, branch, typ string, q content.ListQuery) (content.Page, error)
}

// Object is an object as templates see it: its metadata as fields, its
// values through the functions (value, ref, name, …).
type Object struct {
	ID            int64
	GUID          string
	APIIdentifier string
	TypeID        int64
	Deleted       bool
	values        []content.Value
}

// langObj is a language object: its ISO code and fallback.
type langObj struct {
	id       int64
	api, iso string
	fallback int64
}

// maxLanguages bounds the language objects one render reads.
const maxLanguages = 1000

// loader reads the objects of one render from the Management view, in
// batches, and keeps them: an object is read at most once per render, the
// targets of a reference attribute are read for every loaded object at
// once, and at most max objects are read in all.
type loader struct {
	r       Reader
	branch  string
	caller  *auth.Principal
	max     int
	reads   int
	byID    map[int64]*Object
	byIdent map[string]*Object
	missing map[int64]bool   // ids that are not visible on the branch
	attrs   map[string]int64 // attribute identifier → id
	types   map[int64]int64  // type id → its display-name attribute (0: none)
	langs   map[int64]*langObj
	// tags name what the render read or looked up, for the render cache
	// (rendercache: objects found or missing, identifiers, listed types);
	// private is set when it read a user object, which is never cached
	// (users change without change events, and only some callers see
	// them).
	tags    map[string]struct{}
	private bool
}

func newLoader(r Reader, branch string, caller *auth.Principal, maxReads int) *loader {
	return &loader{r: r, branch: branch, caller: caller, max: maxReads, byID: map[int64]*Object{}, byIdent: map[string]*Object{},
		missing: map[int64]bool{}, attrs: map[string]int64{}, types: map[int64]int64{},
		// Every render depends on the branch tree (which chain it reads).
		tags: map[string]struct{}{rendercache.TypeTag(content.TypeBranch): {}}}
}

func (l *loader) tag(t string) { l.tags[t] = struct{}{} }

// tagIdent tags a lookup by id, GUID or ApiIdentifier, found or not.
func (l *loader) tagIdent(s string) {
	id, err := content.ParseIdent(s)
	switch {
	case err != nil:
	case id.Kind == content.IdentID:
		l.tag(rendercache.ObjectTag(id.ID))
	case id.Kind == content.IdentGUID:
		l.tag(rendercache.IdentTag(id.GUID))
		l.tag(rendercache.IdentTag(id.Raw))
	default:
		l.tag(rendercache.IdentTag(id.Raw))
	}
}

// cacheTags returns the render's tags, or nil when it must not be cached.
func (l *loader) cacheTags() []string {
	if l.private {
		return nil
	}
	out := make([]string, 0, len(l.tags))
	for t := range l.tags {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// errTooManyObjects is a render that reads more than its bound.
var errTooManyObjects = errkind.New(errkind.Unprocessable, "too many objects read")

func (l *loader) opts() content.ReadOptions {
	return content.ReadOptions{Inherited: true, Caller: l.caller}
}

func (l *loader) count(n int) error {
	l.reads += n
	if l.reads > l.max {
		return fmt.Errorf("%w: a render reads at most %d objects", errTooManyObjects, l.max)
	}
	return nil
}

func (l *loader) keep(o content.Object) *Object {
	if cur := l.byID[o.ID]; cur != nil {
		return cur
	}
	obj := &Object{ID: o.ID, GUID: o.GUID, APIIdentifier: o.APIIdentifier, TypeID: o.TypeID, Deleted: o.Deleted, values: o.Values}
	l.byID[o.ID] = obj
	l.tag(rendercache.ObjectTag(o.ID))
	if !rendercache.Cacheable(o.TypeID) {
		l.private = true
	}
	return obj
}

// objects reads the objects named by idents (ids, GUIDs, ApiIdentifiers)
// in their order, in one read for those not loaded yet. An unknown one is
// content.ErrNotFound.
func (l *loader) objects(ctx context.Context, idents []string) ([]*Object, error) {
	var need []string
	for _, s := range idents {
		if l.byIdent[s] == nil && !slices.Contains(need, s) {
			need = append(need, s)
		}
	}
	if len(need) > 0 {
		if err := l.count(len(need)); err != nil {
			return nil, err
		}
		for _, s := range need {
			l.tagIdent(s)
		}
		objs, err := l.r.GetObjects(ctx, l.branch, need, l.opts())
		if err != nil {
			return nil, err
		}
		for i, o := range objs {
			l.byIdent[need[i]] = l.keep(o)
		}
	}
	out := make([]*Object, len(idents))
	for i, s := range idents {
		out[i] = l.byIdent[s]
	}
	return out, nil
}

// byIDs reads the objects of ids not loaded yet, in one read; ids not
// visible on the branch are remembered as missing.
func (l *loader) byIDs(ctx context.Context, ids []int64) error {
	var need []string
	seen := map[int64]bool{}
	for _, id := range ids {
		if l.byID[id] == nil && !l.missing[id] && !seen[id] && id > 0 {
			seen[id] = true
			need = append(need, strconv.FormatInt(id, 10))
			l.tag(rendercache.ObjectTag(id)) // found or missing
		}
	}
	if len(need) == 0 {
		return nil
	}
	if err := l.count(len(need)); err != nil {
		return err
	}
	o := l.opts()
	o.SkipMissing = true
	objs, err := l.r.GetObjects(ctx, l.branch, need, o)
	if err != nil {
		return err
	}
	for _, o := range objs {
		l.keep(o)
	}
	for id := range seen {
		if l.byID[id] == nil {
			l.missing[id] = true
		}
	}
	return nil
}

// attribute resolves an attribute by ApiIdentifier or id (an id needs no
// read: it selects no values unless it names an attribute).
func (l *loader) attribute(ctx context.Context, ident string) (int64, error) {
	if id, ok := l.attrs[ident]; ok {
		return id, nil
	}
	if id, err := strconv.ParseInt(ident, 10, 64); err == nil && id > 0 {
		l.attrs[ident] = id
		return id, nil
	}
	objs, err := l.objects(ctx, []string{ident})
	if err != nil {
		return 0, fmt.Errorf("attribute %q: %w", ident, err)
	}
	if objs[0].TypeID != content.TypeAttribute {
		return 0, fmt.Errorf("%q is no attribute", ident)
	}
	l.attrs[ident] = objs[0].ID
	return objs[0].ID, nil
}

// prefetchAttributes resolves the attribute identifiers a template names
// literally in one read; when one of them is unknown, nothing is kept and
// each is resolved (and reported) when the render asks for it.
func (l *loader) prefetchAttributes(ctx context.Context, idents []string) error {
	var need []string
	for _, s := range idents {
		if _, ok := l.attrs[s]; !ok && l.byIdent[s] == nil {
			if _, err := content.ParseIdent(s); err == nil {
				need = append(need, s)
			}
		}
	}
	if len(need) < 2 {
		return nil // one is read when asked for, as cheaply
	}
	if _, err := l.objects(ctx, need); err != nil && !errors.Is(err, content.ErrNotFound) && !errors.Is(err, content.ErrAmbiguous) {
		return err
	}
	return nil
}

// displayNameAttr is the attribute a type names for its objects' display
// names (0: none). The types of all loaded objects are read at once.
func (l *loader) displayNameAttr(ctx context.Context, typ int64) (int64, error) {
	if a, ok := l.types[typ]; ok {
		return a, nil
	}
	var need []int64
	for _, o := range l.byID {
		if _, ok := l.types[o.TypeID]; !ok && o.TypeID > 0 {
			need = append(need, o.TypeID)
		}
	}
	if err := l.byIDs(ctx, append(need, typ)); err != nil {
		return 0, err
	}
	for _, id := range append(need, typ) {
		var attr int64
		if t := l.byID[id]; t != nil {
			for _, v := range t.values {
				if v.Attribute == model.AttrTypeDisplayName && v.Language == 0 && v.Variant == 0 {
					attr, _ = model.TypeDisplayNameAttribute(v.JSON)
					break
				}
			}
		}
		l.types[id] = attr
	}
	return l.types[typ], nil
}

// languages reads the live language objects of the branch (one list
// read, once per render).
func (l *loader) languages(ctx context.Context) (map[int64]*langObj, error) {
	if l.langs != nil {
		return l.langs, nil
	}
	live := false
	l.tag(rendercache.TypeTag(content.TypeLanguage))
	l.tag(rendercache.ObjectTag(content.TypeLanguage))
	p, err := l.r.GetTypedObjects(ctx, l.branch, strconv.FormatInt(content.TypeLanguage, 10),
		content.ListQuery{ReadOptions: l.opts(), Deleted: &live, Take: maxLanguages})
	if err != nil {
		return nil, err
	}
	l.langs = make(map[int64]*langObj, len(p.Objects))
	for _, o := range p.Objects {
		lg := &langObj{id: o.ID, api: o.APIIdentifier}
		for _, v := range o.Values {
			if v.Language != 0 || v.Variant != 0 {
				continue
			}
			switch v.Attribute {
			case content.AttrIsoLanguageCode:
				lg.iso = model.DisplayString(v.JSON)
			case content.AttrFallbackLanguage:
				lg.fallback, _ = refOf(v.JSON)
			}
		}
		l.langs[o.ID] = lg
	}
	return l.langs, nil
}

// language finds a language by id, ApiIdentifier or ISO code (without
// case).
func (l *loader) language(ctx context.Context, ident string) (*langObj, error) {
	langs, err := l.languages(ctx)
	if err != nil {
		return nil, err
	}
	if id, err := strconv.ParseInt(ident, 10, 64); err == nil {
		if lg := langs[id]; lg != nil {
			return lg, nil
		}
	}
	for _, lg := range langs {
		if strings.EqualFold(lg.iso, ident) || lg.api != "" && lg.api == ident {
			return lg, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown language %q", errInvalid, ident)
}

// languageChain is the fallback chain of lang (model.LanguageChain).
func (l *loader) languageChain(ctx context.Context, lang int64) ([]int64, error) {
	langs, err := l.languages(ctx)
	if err != nil {
		return nil, err
	}
	return model.LanguageChain(lang, func(id int64) (bool, int64, error) {
		if lg := langs[id]; lg != nil {
			return true, lg.fallback, nil
		}
		return false, 0, nil
	})
}
