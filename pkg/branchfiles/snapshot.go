package branchfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/model"
)

// Well-known ids the export needs (docs/api-reference.md §9).
const (
	typeType      int64 = 0
	typeAttribute int64 = 10
	attrDataType  int64 = 1001
	// typeWebhook holds webhook definitions (their secrets and URLs belong
	// to an installation).
	typeWebhook int64 = 210
	// rootName names the virtual root 0, the type of types.
	rootName = "root"
)

// excludedTypes are types whose objects no export holds: branches (the
// tree of an installation), users with their grants and secrets, webhook
// definitions.
var excludedTypes = map[int64]bool{content.TypeBranch: true, content.TypeUser: true, typeWebhook: true}

// snapshot is what a branch shows through the Management API: every object
// of every type an export may hold (live and deleted, system objects
// included), and the objects they refer to.
type snapshot struct {
	objects []*apiObject // listing order
	byID    map[int64]*apiObject
	byGUID  map[string]*apiObject
	byAPI   map[string]*apiObject
}

// read lists branch: the types, the attributes, then the objects of every
// live type no export excludes; then the objects they refer to that the
// lists did not hold (read by id).
func read(ctx context.Context, c *Client, branch string) (*snapshot, error) {
	s := &snapshot{byID: map[int64]*apiObject{}, byGUID: map[string]*apiObject{}, byAPI: map[string]*apiObject{}}
	types, err := c.typed(ctx, branch, typeType)
	if err != nil {
		return nil, err
	}
	s.add(types...)
	for _, t := range types {
		if t.deleted() || excludedTypes[t.Meta.ID] || t.Meta.ID == typeType {
			continue
		}
		objs, err := c.typed(ctx, branch, t.Meta.ID)
		if err != nil {
			return nil, err
		}
		s.add(objs...)
		if len(s.objects) > 10*MaxObjects {
			return nil, fmt.Errorf("branch %s holds more than %d objects", branch, 10*MaxObjects)
		}
	}
	var missing []int64
	seen := map[int64]bool{}
	for _, o := range s.objects {
		s.references(*o, func(id int64) {
			if _, ok := s.byID[id]; !ok && !seen[id] {
				seen[id] = true
				missing = append(missing, id)
			}
		})
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	more, err := c.objects(ctx, branch, missing)
	if err != nil {
		return nil, err
	}
	s.add(more...)
	return s, nil
}

func (s *snapshot) add(objs ...apiObject) {
	for i := range objs {
		o := &objs[i]
		if _, dup := s.byID[o.Meta.ID]; dup {
			continue
		}
		s.objects = append(s.objects, o)
		s.byID[o.Meta.ID], s.byGUID[o.Meta.GUID] = o, o
		if o.Meta.APIIdentifier != "" {
			s.byAPI[o.Meta.APIIdentifier] = o
		}
	}
}

// dataType is the data type (1001) of attribute id, "" when unknown.
func (s *snapshot) dataType(id int64) string {
	a, ok := s.byID[id]
	if !ok {
		return ""
	}
	for _, v := range a.Values {
		var dt string
		if v.Attribute == attrDataType && v.Language == 0 && v.Variant == 0 && json.Unmarshal(v.Value, &dt) == nil {
			return dt
		}
	}
	return ""
}

// references calls f with every object id o refers to: its type, the
// attributes, languages, variants and units of its values, and the
// targets of its reference values.
func (s *snapshot) references(o apiObject, f func(int64)) {
	if o.typeRef() != typeType {
		f(o.typeRef())
	}
	for _, v := range o.Values {
		f(v.Attribute)
		for _, id := range []int64{v.Language, v.Variant} {
			if id != 0 {
				f(id)
			}
		}
		if v.UnitRef != nil && *v.UnitRef != 0 {
			f(*v.UnitRef)
		}
		if id, ok := s.refValue(v); ok {
			f(id)
		}
	}
}

// refValue is the target of v when its attribute is a reference.
func (s *snapshot) refValue(v apiValue) (int64, bool) {
	if !model.IsReference(s.dataType(v.Attribute)) {
		return 0, false
	}
	var id int64
	if json.Unmarshal(v.Value, &id) != nil || id == 0 {
		return 0, false
	}
	return id, true
}

// name is how files name object id: its ApiIdentifier, else its GUID.
func (s *snapshot) name(id int64) (string, error) {
	if id == typeType {
		return rootName, nil
	}
	o, ok := s.byID[id]
	if !ok {
		return "", fmt.Errorf("object %d is not readable on the branch", id)
	}
	if o.Meta.APIIdentifier != "" {
		return o.Meta.APIIdentifier, nil
	}
	return o.Meta.GUID, nil
}

// bootstrappedGUID starts the GUIDs of every bootstrapped object (the
// system model, the job definitions, the media types): each installation
// has them.
const bootstrappedGUID = "00000000-0000-0000-0000-"

// exported reports whether o goes into an export: live, not bootstrapped,
// of a type no export excludes, of a live type.
func (s *snapshot) exported(o apiObject) bool {
	if o.deleted() || content.IsSystemObject(o.Meta.ID) || strings.HasPrefix(o.Meta.GUID, bootstrappedGUID) || excludedTypes[o.typeRef()] {
		return false
	}
	if o.typeRef() == typeType {
		return true
	}
	t, ok := s.byID[o.typeRef()]
	return ok && !t.deleted()
}

// portable is o as files write it.
func (s *snapshot) portable(o apiObject) (Object, error) {
	typ, err := s.name(o.typeRef())
	if err != nil {
		return Object{}, fmt.Errorf("object %s: its type: %w", o.Meta.GUID, err)
	}
	out := Object{GUID: o.Meta.GUID, APIIdentifier: o.Meta.APIIdentifier, Type: typ, Values: make([]Value, 0, len(o.Values))}
	for _, v := range o.Values {
		pv := Value{Value: compactJSON(v.Value)}
		if v.SortReverse != nil {
			pv.SortReverse = *v.SortReverse
		}
		names := []*string{&pv.Attribute, &pv.Language, &pv.Variant, &pv.Unit}
		ids := []int64{v.Attribute, v.Language, v.Variant, 0}
		if v.UnitRef != nil {
			ids[3] = *v.UnitRef
		}
		for i, id := range ids {
			if id == 0 && i > 0 {
				continue
			}
			if *names[i], err = s.name(id); err != nil {
				return Object{}, fmt.Errorf("object %s: %w", o.Meta.GUID, err)
			}
		}
		if id, ok := s.refValue(v); ok {
			n, err := s.name(id)
			if err != nil {
				return Object{}, fmt.Errorf("object %s: the value of attribute %s: %w", o.Meta.GUID, pv.Attribute, err)
			}
			pv.Value, _ = json.Marshal(n)
		}
		out.Values = append(out.Values, pv)
	}
	out.Values = sortedValues(out.Values)
	return out, nil
}

// compactJSON is a value's JSON without insignificant space ("null" for
// none).
func compactJSON(b json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}

// kind is the directory of o's file.
func kind(typeRef int64) string {
	switch typeRef {
	case typeType:
		return TypesDir
	case typeAttribute:
		return AttributesDir
	}
	return ObjectsDir
}
