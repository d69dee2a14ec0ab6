package delivery

import (
	"context"

	"github.com/cmsplatform/cms/pkg/delivery"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// List implements Delivery_List.
func (s *service) List(ctx context.Context, in *deliveryv1.ListRequest) (*deliveryv1.ObjectList, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Filter: in.Filter, Sort: in.Sort, Deleted: in.GetDeleted(), Props: in.GetProps(),
		Skip: int64(in.GetSkip()), Take: int64(in.GetTake())}
	return serve(ctx, s, "List", in, func() (*deliveryv1.ObjectList, []string, error) { return s.list(ctx, r) })
}

// ListTyped implements Delivery_ListTyped.
func (s *service) ListTyped(ctx context.Context, in *deliveryv1.ListTypedRequest) (*deliveryv1.ObjectList, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Filter: in.Filter, Sort: in.Sort, Deleted: in.GetDeleted(), Props: in.GetProps(),
		Skip: int64(in.GetSkip()), Take: int64(in.GetTake())}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return serve(ctx, s, "ListTyped", in, func() (*deliveryv1.ObjectList, []string, error) { return s.list(ctx, r) })
}

func (s *service) list(ctx context.Context, r delivery.Request) (*deliveryv1.ObjectList, []string, error) {
	l, err := s.dom.List(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	out := &deliveryv1.ObjectList{Skip: int32(l.Skip), Count: int32(l.Count), More: l.More}
	if out.Objs, err = toObjects(l.Objs); err != nil {
		return nil, nil, err
	}
	out.Refs, err = toObjects(l.Refs)
	return out, l.Tags, err
}

// Get implements Delivery_Get.
func (s *service) Get(ctx context.Context, in *deliveryv1.GetRequest) (*deliveryv1.ObjectResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Deleted: in.GetDeleted(), Props: in.GetProps()}
	return serve(ctx, s, "Get", in, func() (*deliveryv1.ObjectResult, []string, error) { return s.get(ctx, r, in.Id) })
}

// GetTyped implements Delivery_GetTyped.
func (s *service) GetTyped(ctx context.Context, in *deliveryv1.GetTypedRequest) (*deliveryv1.ObjectResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Deleted: in.GetDeleted(), Props: in.GetProps()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return serve(ctx, s, "GetTyped", in, func() (*deliveryv1.ObjectResult, []string, error) { return s.get(ctx, r, in.Id) })
}

func (s *service) get(ctx context.Context, r delivery.Request, id string) (*deliveryv1.ObjectResult, []string, error) {
	one, err := s.dom.Get(ctx, r, id)
	if err != nil {
		return nil, nil, err
	}
	out := &deliveryv1.ObjectResult{}
	if out.Obj, err = toObject(one.Obj); err != nil {
		return nil, nil, err
	}
	out.Refs, err = toObjects(one.Refs)
	return out, one.Tags, err
}

// Count implements Delivery_Count.
func (s *service) Count(ctx context.Context, in *deliveryv1.CountRequest) (*deliveryv1.CountResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	return serve(ctx, s, "Count", in, func() (*deliveryv1.CountResult, []string, error) { return s.count(ctx, r) })
}

// CountTyped implements Delivery_CountTyped.
func (s *service) CountTyped(ctx context.Context, in *deliveryv1.CountTypedRequest) (*deliveryv1.CountResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return serve(ctx, s, "CountTyped", in, func() (*deliveryv1.CountResult, []string, error) { return s.count(ctx, r) })
}

func (s *service) count(ctx context.Context, r delivery.Request) (*deliveryv1.CountResult, []string, error) {
	n, err := s.dom.Count(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	tags, err := s.dom.QueryTags(ctx, r)
	return &deliveryv1.CountResult{Count: int32(min(n, 1<<31-1))}, tags, err
}

// toObjects converts rendered objects; nil stays nil (refs omitted).
func toObjects(objs []delivery.Object) ([]*deliveryv1.Object, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	out := make([]*deliveryv1.Object, 0, len(objs))
	for _, o := range objs {
		p, err := toObject(o)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func toObject(o delivery.Object) (*deliveryv1.Object, error) {
	props, err := structpb.NewStruct(o.Props)
	if err != nil {
		return nil, err
	}
	m := &deliveryv1.ObjectMeta{Id: int32(o.Meta.ID), Guid: o.Meta.GUID, TypeRef: int32(o.Meta.TypeRef), Type: o.Meta.Type,
		LastTransaction: o.Meta.LastTransaction, Deleted: o.Meta.Deleted, Etag: o.Meta.ETag}
	if o.Meta.APIIdentifier != "" {
		m.ApiIdentifier = &o.Meta.APIIdentifier
	}
	if !o.Meta.LastModified.IsZero() {
		m.LastModified = timestamppb.New(o.Meta.LastModified)
	}
	out := &deliveryv1.Object{DisplayName: o.DisplayName, Meta: m, Props: props}
	if o.Reverse != nil {
		rev := make(map[string]any, len(o.Reverse))
		for api, ids := range o.Reverse {
			list := make([]any, len(ids))
			for i, id := range ids {
				list[i] = id
			}
			rev[api] = list
		}
		if out.Reverse, err = structpb.NewStruct(rev); err != nil {
			return nil, err
		}
	}
	if o.DisplayIcon != nil {
		icon := int32(*o.DisplayIcon)
		out.DisplayIcon = &icon
	}
	return out, nil
}
