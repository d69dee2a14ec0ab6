package delivery

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/query"
	"github.com/cmsplatform/cms/pkg/params"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// List implements Delivery_List.
func (s *service) List(ctx context.Context, in *deliveryv1.ListRequest) (*deliveryv1.ObjectList, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Filter: in.Filter, Sort: in.Sort, Deleted: in.GetDeleted(), Props: in.GetProps(),
		Skip: int64(in.GetSkip())}
	if err := sentTake(&r, in.Take); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return s.list(ctx, "List", in, r)
}

// ListTyped implements Delivery_ListTyped.
func (s *service) ListTyped(ctx context.Context, in *deliveryv1.ListTypedRequest) (*deliveryv1.ObjectList, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Filter: in.Filter, Sort: in.Sort, Deleted: in.GetDeleted(), Props: in.GetProps(),
		Skip: int64(in.GetSkip())}
	if err := sentTake(&r, in.Take); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return s.list(ctx, "ListTyped", in, r)
}

// sentTake sets r.Take from the take parameter as sent: absent is the
// default, a sent 0 is refused like any value outside 1..MaxTake.
func sentTake(r *delivery.Request, take *int32) error {
	n, err := params.Take("take", take, query.DefaultTake, query.MaxTake)
	r.Take = int64(n)
	return err
}

// list answers List and ListTyped (op) for the request in.
func (s *service) list(ctx context.Context, op string, in proto.Message, r delivery.Request) (*deliveryv1.ObjectList, error) {
	read := func(ctx context.Context) (delivery.List, []string, error) {
		l, err := s.dom.List(ctx, r)
		return l, l.Tags, err
	}
	return answer(ctx, s, op, in, read, delivery.AppendListJSON, listMessage, &deliveryv1.ObjectList{})
}

func listMessage(l delivery.List) (*deliveryv1.ObjectList, error) {
	out := &deliveryv1.ObjectList{Skip: int32(l.Skip), Count: int32(l.Count), More: l.More}
	var err error
	if out.Objs, err = toObjects(l.Objs); err != nil {
		return nil, err
	}
	out.Refs, err = toObjects(l.Refs)
	return out, err
}

// answer serves op for the request in through the response cache from
// the domain's view that read returns (with its cache tags): for the
// gateway in process as the wire JSON appendJSON writes from the view
// (carried by empty, gateway.WithWireJSON), for everyone else as the
// message build makes of the same view.
func answer[M proto.Message, V any](ctx context.Context, s *service, op string, in proto.Message, read func(context.Context) (V, []string, error),
	appendJSON func([]byte, V) ([]byte, error), build func(V) (M, error), empty M) (M, error) {
	wire := gateway.TakesWireJSON(ctx)
	if wire {
		op += wireJSONOp
	}
	return serve(ctx, s, op, in, func(ctx context.Context) (M, []string, error) {
		v, tags, err := read(ctx)
		if err != nil {
			var zero M
			return zero, nil, err
		}
		var out M
		if wire {
			out, err = gateway.WithWireJSON(empty, func(b []byte) ([]byte, error) { return appendJSON(b, v) })
		} else {
			out, err = build(v)
		}
		return out, tags, err
	})
}

// wireJSONOp tells answers carrying their wire JSON from messages apart in
// the response cache (its key and the ETag).
const wireJSONOp = "/json"

// Get implements Delivery_Get.
func (s *service) Get(ctx context.Context, in *deliveryv1.GetRequest) (*deliveryv1.ObjectResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Deleted: in.GetDeleted(), Props: in.GetProps()}
	return s.get(ctx, "Get", in, r, in.Id)
}

// GetTyped implements Delivery_GetTyped.
func (s *service) GetTyped(ctx context.Context, in *deliveryv1.GetTypedRequest) (*deliveryv1.ObjectResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Resolve: in.Resolve,
		ResolveDepth: in.ResolveDepth, ResolveReverse: in.ResolveReverse, ResolveReverseDepth: in.ResolveReverseDepth, ResolveUnits: in.GetResolveUnits(), Deleted: in.GetDeleted(), Props: in.GetProps()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return s.get(ctx, "GetTyped", in, r, in.Id)
}

// get answers Get and GetTyped (op) for the request in.
func (s *service) get(ctx context.Context, op string, in proto.Message, r delivery.Request, id string) (*deliveryv1.ObjectResult, error) {
	read := func(ctx context.Context) (delivery.Single, []string, error) {
		one, err := s.dom.Get(ctx, r, id)
		return one, one.Tags, err
	}
	return answer(ctx, s, op, in, read, delivery.AppendSingleJSON, singleMessage, &deliveryv1.ObjectResult{})
}

func singleMessage(one delivery.Single) (*deliveryv1.ObjectResult, error) {
	out := &deliveryv1.ObjectResult{}
	var err error
	if out.Obj, err = toObject(one.Obj); err != nil {
		return nil, err
	}
	out.Refs, err = toObjects(one.Refs)
	return out, err
}

// Count implements Delivery_Count.
func (s *service) Count(ctx context.Context, in *deliveryv1.CountRequest) (*deliveryv1.CountResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	return serve(ctx, s, "Count", in, func(ctx context.Context) (*deliveryv1.CountResult, []string, error) { return s.count(ctx, r) })
}

// CountTyped implements Delivery_CountTyped.
func (s *service) CountTyped(ctx context.Context, in *deliveryv1.CountTypedRequest) (*deliveryv1.CountResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	return serve(ctx, s, "CountTyped", in, func(ctx context.Context) (*deliveryv1.CountResult, []string, error) { return s.count(ctx, r) })
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
	// One allocation for all records and metas of the page, and values in
	// chunks: a page holds thousands of them, all freed together.
	recs := make([]deliveryv1.Object, len(objs))
	metas := make([]deliveryv1.ObjectMeta, len(objs))
	var a valueAlloc
	out := make([]*deliveryv1.Object, len(objs))
	for i := range objs {
		if err := a.fillObject(&recs[i], &metas[i], &objs[i]); err != nil {
			return nil, err
		}
		out[i] = &recs[i]
	}
	return out, nil
}

func toObject(o delivery.Object) (*deliveryv1.Object, error) {
	var a valueAlloc
	out := &deliveryv1.Object{}
	if err := a.fillObject(out, &deliveryv1.ObjectMeta{}, &o); err != nil {
		return nil, err
	}
	return out, nil
}

// fillObject converts o into out, with m as its meta. Props become a
// google.protobuf.Struct as structpb.NewStruct would build it (int64 as a
// number, the same UTF-8 errors); Reverse ids become lists of numbers.
func (a *valueAlloc) fillObject(out *deliveryv1.Object, m *deliveryv1.ObjectMeta, o *delivery.Object) error {
	props, err := a.structOf(o.Props)
	if err != nil {
		return err
	}
	m.Id, m.Guid, m.TypeRef, m.Type = int32(o.Meta.ID), o.Meta.GUID, int32(o.Meta.TypeRef), o.Meta.Type
	m.LastTransaction, m.Deleted, m.Etag = o.Meta.LastTransaction, o.Meta.Deleted, o.Meta.ETag
	if o.Meta.APIIdentifier != "" {
		api := o.Meta.APIIdentifier // not a pointer into the caller's objects
		m.ApiIdentifier = &api
	}
	if !o.Meta.LastModified.IsZero() {
		m.LastModified = a.timestamp(o.Meta.LastModified)
	}
	out.DisplayName, out.Meta, out.Props = o.DisplayName, m, props
	if o.Reverse != nil {
		rev := a.newStruct(len(o.Reverse))
		for api, ids := range o.Reverse {
			if !utf8.ValidString(api) {
				return fmt.Errorf("invalid UTF-8 in string: %q", api)
			}
			list := a.newList(len(ids))
			for i, id := range ids {
				list.Values[i] = a.number(float64(id))
			}
			v := a.value()
			v.Kind = &structpb.Value_ListValue{ListValue: list}
			rev.Fields[api] = v
		}
		out.Reverse = rev
	}
	if o.DisplayIcon != nil {
		icon := int32(*o.DisplayIcon)
		out.DisplayIcon = &icon
	}
	return nil
}

// valueAlloc hands out structpb values from chunks, which saves two
// allocations per value (the Value and its kind) on large pages.
type valueAlloc struct {
	vals    chunks[structpb.Value]
	nums    chunks[structpb.Value_NumberValue]
	strs    chunks[structpb.Value_StringValue]
	lists   chunks[structpb.ListValue]
	structs chunks[structpb.Struct]
	times   chunks[timestamppb.Timestamp]
}

// A chunk holds at first firstChunk values and each next one twice the
// one before, up to valueChunk: a page of five objects does not allocate
// (and the garbage collector does not sweep) hundreds of values it never
// uses, a page of thousands takes a few dozen allocations per kind.
const firstChunk, valueChunk = 8, 256

// chunks hands out values of one kind.
type chunks[T any] struct {
	free []T
	size int // of the last chunk
}

// next hands out the next value, allocating a new chunk when the last is
// used up; limit bounds a chunk.
func (c *chunks[T]) next(limit int) *T {
	if len(c.free) == 0 {
		c.size = min(max(2*c.size, firstChunk), limit)
		c.free = make([]T, c.size)
	}
	p := &c.free[0]
	c.free = c.free[1:]
	return p
}

// value returns a new, empty Value.
func (a *valueAlloc) value() *structpb.Value { return a.vals.next(valueChunk) }

func (a *valueAlloc) newStruct(n int) *structpb.Struct {
	s := a.structs.next(valueChunk / 4)
	s.Fields = make(map[string]*structpb.Value, n)
	return s
}

func (a *valueAlloc) newList(n int) *structpb.ListValue {
	l := a.lists.next(valueChunk / 4)
	l.Values = make([]*structpb.Value, n)
	return l
}

// timestamp is timestamppb.New(t).
func (a *valueAlloc) timestamp(t time.Time) *timestamppb.Timestamp {
	ts := a.times.next(valueChunk / 4)
	ts.Seconds, ts.Nanos = t.Unix(), int32(t.Nanosecond())
	return ts
}

func (a *valueAlloc) number(f float64) *structpb.Value {
	k := a.nums.next(valueChunk)
	k.NumberValue = f
	v := a.value()
	v.Kind = k
	return v
}

func (a *valueAlloc) str(s string) *structpb.Value {
	k := a.strs.next(valueChunk)
	k.StringValue = s
	v := a.value()
	v.Kind = k
	return v
}

// structOf is structpb.NewStruct(m) with values from a.
func (a *valueAlloc) structOf(m map[string]any) (*structpb.Struct, error) {
	out := a.newStruct(len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", k)
		}
		pv, err := a.valueOf(v)
		if err != nil {
			return nil, err
		}
		out.Fields[k] = pv
	}
	return out, nil
}

// valueOf is structpb.NewValue(v) with values from a for the types render
// produces; other types go to structpb.NewValue itself.
func (a *valueAlloc) valueOf(v any) (*structpb.Value, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", x)
		}
		return a.str(x), nil
	case int64:
		return a.number(float64(x)), nil
	case float64:
		return a.number(x), nil
	case []any:
		list := a.newList(len(x))
		for i, e := range x {
			pv, err := a.valueOf(e)
			if err != nil {
				return nil, err
			}
			list.Values[i] = pv
		}
		pv := a.value()
		pv.Kind = &structpb.Value_ListValue{ListValue: list}
		return pv, nil
	case map[string]any:
		st, err := a.structOf(x)
		if err != nil {
			return nil, err
		}
		pv := a.value()
		pv.Kind = &structpb.Value_StructValue{StructValue: st}
		return pv, nil
	}
	return structpb.NewValue(v)
}
