package management

import (
	"context"
	"encoding/json"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/params"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// change is who writes (the authenticated principal: the domain records
// the user it acts for via X-CmsApi-Username, and lets an administrator
// write users and permissions) and the request's comment.
func change(ctx context.Context, comment string) content.Change {
	return content.Change{Caller: callerRef(ctx), Comment: comment}
}

// sentTake reads a list's take as sent: absent is content.DefaultTake, a
// sent value must lie within 1..content.MaxTake (params.Take).
func sentTake(take *int32) (int, error) {
	return params.Take("take", take, content.DefaultTake, content.MaxTake)
}

func readOptions(ctx context.Context, inherited bool, attributes, languages, variants string) content.ReadOptions {
	p := caller(ctx)
	return content.ReadOptions{
		Caller:     &p,
		Inherited:  inherited,
		Attributes: content.SplitIdents(attributes),
		Languages:  content.SplitIdents(languages),
		Variants:   content.SplitIdents(variants),
	}
}

// readOptionsAt is readOptions of a Management object read that may name a
// past transaction (asOf, content.SentAsOf).
func readOptionsAt(ctx context.Context, inherited bool, attributes, languages, variants string, asOf *int64) (content.ReadOptions, error) {
	o := readOptions(ctx, inherited, attributes, languages, variants)
	var err error
	o.AsOf, err = content.SentAsOf(asOf)
	return o, err
}

func valueInputs(in []*managementv1.CmsValue) ([]content.ValueInput, error) {
	out := make([]content.ValueInput, 0, len(in))
	for _, v := range in {
		vi := content.ValueInput{Attribute: int64(v.GetAttribute()), Language: int64(v.GetLanguage()), Variant: int64(v.GetVariant()),
			Inherit: v.GetInherit()}
		if v.SortReverse != nil {
			s := int64(v.GetSortReverse())
			vi.SortReverse = &s
		}
		if v.UnitRef != nil {
			u := int64(v.GetUnitRef())
			vi.UnitRef = &u
		}
		vi.JSON = json.RawMessage("null")
		if v.GetValue() != nil {
			b, err := v.GetValue().MarshalJSON()
			if err != nil {
				return nil, err
			}
			vi.JSON = b
		}
		out = append(out, vi)
	}
	return out, nil
}

func objectInputs(in []*managementv1.CmsObject) ([]content.ObjectInput, error) {
	out := make([]content.ObjectInput, 0, len(in))
	for i, o := range in {
		if o.GetMeta() == nil {
			// Without meta, typeRef would read as 0 and silently create a type.
			return nil, status.Errorf(codes.InvalidArgument, "objects[%d]: meta is required", i)
		}
		vals, err := valueInputs(o.GetValues())
		if err != nil {
			return nil, err
		}
		m := o.GetMeta()
		if m.GetTypeRef() < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "objects[%d]: meta.typeRef must be a type id (0 or more), got %d", i, m.GetTypeRef())
		}
		out = append(out, content.ObjectInput{
			ID: int64(m.GetId()), GUID: m.GetGuid(), APIIdentifier: m.ApiIdentifier,
			TypeID: int64(m.GetTypeRef()), Deleted: m.Deleted, Values: vals,
		})
	}
	return out, nil
}

func toObject(o content.Object) (*managementv1.CmsObject, error) {
	meta := &managementv1.CmsObjectMetadata{
		Id: int32(o.ID), Guid: o.GUID, TypeRef: proto.Int32(int32(o.TypeID)), LastTransaction: o.LastTransaction, Deleted: proto.Bool(o.Deleted),
	}
	if o.APIIdentifier != "" {
		meta.ApiIdentifier = &o.APIIdentifier
	}
	values, err := toValues(o.Values)
	if err != nil {
		return nil, err
	}
	return &managementv1.CmsObject{Meta: meta, Values: values}, nil
}

func toObjectList(objs []content.Object, cont string) (*managementv1.CmsObjectList, error) {
	out := &managementv1.CmsObjectList{Count: int32(len(objs)), Objects: make([]*managementv1.CmsObject, 0, len(objs))}
	if cont != "" {
		out.Continue = &cont
	}
	for _, o := range objs {
		po, err := toObject(o)
		if err != nil {
			return nil, err
		}
		out.Objects = append(out.Objects, po)
	}
	return out, nil
}

func toTransaction(t content.Transaction) *managementv1.CmsTransaction {
	b := int32(t.Branch)
	out := &managementv1.CmsTransaction{Id: t.ID, Timestamp: timestamppb.New(t.Time), BranchRef: &b}
	if t.User != "" {
		out.User = &t.User
	}
	if t.Comment != "" {
		out.Comment = &t.Comment
	}
	return out
}

// toValues converts value rows to the wire (every row with its sortReverse).
func toValues(vals []content.Value) ([]*managementv1.CmsValue, error) {
	values := make([]*managementv1.CmsValue, 0, len(vals))
	for _, v := range vals {
		sv := &structpb.Value{}
		if err := sv.UnmarshalJSON(v.JSON); err != nil {
			return nil, err
		}
		sort := int32(v.SortReverse)
		pv := &managementv1.CmsValue{
			Attribute: int32(v.Attribute), Language: int32(v.Language), Variant: int32(v.Variant),
			Value: sv, SortReverse: &sort,
		}
		if v.UnitRef != nil {
			// Unset stays unset: the wire then carries unitRef as the
			// gateway writes absent optionals (null, as the OpenAPI allows).
			u := int32(*v.UnitRef)
			pv.UnitRef = &u
		}
		values = append(values, pv)
	}
	return values, nil
}
