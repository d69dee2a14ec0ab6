package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
)

// Ids delivery names for itself.
const (
	typeRoot        = content.RootID
	defaultLanguage = content.LanguageEnUS
)

// branchModel is the meta-model of one branch at one index version.
type branchModel struct {
	version  int64
	branch   int64
	attrs    map[int64]*attribute
	attrAPI  map[string]*attribute // exact ApiIdentifier
	attrLow  map[string]*attribute // lower-cased ApiIdentifier
	types    map[int64]*objType
	typeLow  map[string]*objType // lower-cased ApiIdentifier
	langs    map[int64]*language
	langKey  map[string]*language // lower-cased culture name or ApiIdentifier
	forms    map[int64][]int64    // form id → formContent attributes
	sources  map[int64]indexdoc.Source
	typeList []int64 // type ids in id order
	langList []int64 // language ids in id order
	variants *variantCache
	// defaultView is set by the first request naming no language and no
	// variant (scope).
	defaultView atomic.Pointer[defaultView]
}

type attribute struct {
	id       int64
	api      string
	dataType string
	multi    bool
	langDep  bool
}

type objType struct {
	id                 int64
	api                string
	nameAttr, iconAttr int64
	icon               *int64
	forms              []int64
	apiAttrs           map[int64]bool // nil: the type has no form content
}

type language struct {
	id       int64
	api, iso string
	fallback int64
}

// model returns the meta-model of branch, loading it when the index
// version changed since the last load.
func (s *Service) model(ctx context.Context, branch int64) (*branchModel, error) {
	v, err := s.Version(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	m := s.models[branch]
	s.mu.Unlock()
	if m != nil && m.version >= v { // a newer model: the index moved on since v was read
		return m, nil
	}
	// The load is shared: one caller going away must not fail the others
	// (engine calls keep their own deadline).
	shared := context.WithoutCancel(ctx)
	loaded, err, _ := s.loads.Do(fmt.Sprintf("%d@%d", branch, v), func() (any, error) {
		m, err := s.loadModel(shared, branch, v)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if len(s.models) > 256 {
			clear(s.models)
		}
		s.models[branch] = m
		s.mu.Unlock()
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	return loaded.(*branchModel), nil
}

// loadModel reads every live type, attribute, language and form of
// branch, paging by id: a soft-deleted one (indexed with its flag) is no
// part of the published model.
func (s *Service) loadModel(ctx context.Context, branch, version int64) (*branchModel, error) {
	m := &branchModel{version: version, branch: branch, attrs: map[int64]*attribute{}, attrAPI: map[string]*attribute{},
		attrLow: map[string]*attribute{}, types: map[int64]*objType{}, typeLow: map[string]*objType{},
		langs: map[int64]*language{}, langKey: map[string]*language{}, forms: map[int64][]int64{},
		sources: map[int64]indexdoc.Source{}, variants: newVariantCache()}
	q := search.And{search.Term{Field: indexdoc.FieldBranch, Value: branch},
		search.Terms{Field: indexdoc.FieldTypeRef, Values: []any{typeRoot, content.TypeAttribute, content.TypeLanguage, content.TypeForm}},
		search.Not{Query: search.Term{Field: indexdoc.FieldDeleted, Value: true}}}
	err := s.scan(ctx, q, func(src indexdoc.Source) {
		m.sources[src.ID] = src
		switch src.TypeRef {
		case typeRoot:
			m.addType(src)
		case content.TypeAttribute:
			m.addAttribute(src)
		case content.TypeLanguage:
			m.addLanguage(src)
		case content.TypeForm:
			for _, v := range src.Values {
				if v.Attr == content.AttrFormContent {
					if id, ok := refOf(v.Value); ok {
						m.forms[src.ID] = append(m.forms[src.ID], id)
					}
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, t := range m.types {
		for _, f := range t.forms {
			for _, a := range m.forms[f] {
				if t.apiAttrs == nil {
					t.apiAttrs = map[int64]bool{content.AttrName: true}
				}
				t.apiAttrs[a] = true
			}
		}
	}
	return m, nil
}

// scan calls fn with the source of every document matching q, in id order.
func (s *Service) scan(ctx context.Context, q search.Query, fn func(indexdoc.Source)) error {
	return indexdoc.ScanSources(ctx, s.eng, s.objects, q, fn)
}

func (m *branchModel) addType(src indexdoc.Source) {
	t := &objType{id: src.ID, api: src.APIIdentifier}
	for _, v := range src.Values {
		id, ok := refOf(v.Value)
		switch {
		case !ok:
		case v.Attr == content.AttrTypeDisplayName:
			t.nameAttr = id
		case v.Attr == content.AttrTypeDisplayIcon:
			t.iconAttr = id
		case v.Attr == content.AttrIcon && t.icon == nil:
			t.icon = &id
		case v.Attr == content.AttrTypeCreateForm || v.Attr == content.AttrTypeDetailForms:
			t.forms = append(t.forms, id)
		}
	}
	m.types[t.id] = t
	m.typeList = append(m.typeList, t.id)
	if t.api != "" {
		m.typeLow[strings.ToLower(t.api)] = t
	}
}

func (m *branchModel) addAttribute(src indexdoc.Source) {
	a := &attribute{id: src.ID, api: src.APIIdentifier}
	for _, v := range src.Values {
		switch v.Attr {
		case content.AttrDataType:
			_ = json.Unmarshal(v.Value, &a.dataType)
		case content.AttrAllowMultiple:
			_ = json.Unmarshal(v.Value, &a.multi)
		case content.AttrLanguageDependent:
			_ = json.Unmarshal(v.Value, &a.langDep)
		}
	}
	m.attrs[a.id] = a
	if a.api != "" {
		m.attrAPI[a.api] = a
		m.attrLow[strings.ToLower(a.api)] = a
	}
}

func (m *branchModel) addLanguage(src indexdoc.Source) {
	l := &language{id: src.ID, api: src.APIIdentifier}
	for _, v := range src.Values {
		switch v.Attr {
		case content.AttrIsoLanguageCode:
			_ = json.Unmarshal(v.Value, &l.iso)
		case content.AttrFallbackLanguage:
			l.fallback, _ = refOf(v.Value)
		}
	}
	m.langs[l.id] = l
	m.langList = append(m.langList, l.id)
	for _, k := range []string{l.iso, l.api} {
		if k != "" {
			m.langKey[strings.ToLower(k)] = l
		}
	}
}

// attribute finds an attribute by ApiIdentifier (exact, then without case)
// or id.
func (m *branchModel) attribute(name string) *attribute {
	if a := m.attrAPI[name]; a != nil {
		return a
	}
	if a := m.attrLow[strings.ToLower(name)]; a != nil {
		return a
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return m.attrs[id]
	}
	return nil
}

// objType finds a type by ApiIdentifier (without case) or id.
func (m *branchModel) objType(name string) (*objType, error) {
	if t := m.typeLow[strings.ToLower(name)]; t != nil {
		return t, nil
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		if t := m.types[id]; t != nil {
			return t, nil
		}
	}
	return nil, notFoundf("object type %q on branch %d", name, m.branch)
}

// langChain resolves the lang parameter (id, culture name or
// ApiIdentifier; default en-US) to its fallback chain, ending with 0
// (language-independent values).
func (m *branchModel) langChain(param string) ([]int64, error) {
	param = strings.TrimSpace(param)
	first := int64(defaultLanguage)
	if param != "" {
		if l := m.langKey[strings.ToLower(param)]; l != nil {
			first = l.id
		} else if id, err := strconv.ParseInt(param, 10, 64); err == nil && (m.langs[id] != nil || id == 0) {
			first = id
		} else {
			return nil, invalidf("unknown language %q", param)
		}
	}
	return model.LanguageChain(first, func(id int64) (bool, int64, error) {
		if l := m.langs[id]; l != nil {
			return true, l.fallback, nil
		}
		return false, 0, nil
	})
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// refOf reads a JSON number as an object id.
func refOf(raw json.RawMessage) (int64, bool) {
	if id, ok := plainInt(raw); ok {
		return id, true
	}
	if isNumber(raw) { // json.Number.Int64 of the literal
		if !isInteger(raw) {
			return 0, false
		}
		id, err := strconv.ParseInt(string(raw), 10, 64)
		return id, err == nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}
