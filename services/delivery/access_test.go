package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestReadGrants: a user with a read grant reads its branch and the
// branches below it, cached or not; without one it gets 403.
func TestReadGrants(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	name, _ := json.Marshal("Child")
	child, _, err := h.site.Content.CreateBranch(ctx, content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ValueInput{
		{Attribute: content.AttrName, Language: 201, JSON: name}, {Attribute: content.AttrBranchParent, JSON: []byte("4")}})
	if err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	cb := strconv.FormatInt(child.ID, 10)
	// Warm the cache as an admin: the checks must also guard cached answers.
	for _, b := range []string{"4", cb} {
		if _, err := h.api().Get(ctx, &deliveryv1.GetRequest{Branch: b, Id: "home"}); err != nil {
			t.Fatal(err)
		}
	}
	as := func(p auth.Principal) context.Context { return auth.WithPrincipal(ctx, p) }
	cases := []struct {
		who    auth.Principal
		branch string
		want   codes.Code
	}{
		{auth.Principal{Name: "reader", Read: []int64{4}}, "4", codes.OK},
		{auth.Principal{Name: "reader", Read: []int64{4}}, cb, codes.OK}, // inherited grant
		{auth.Principal{Name: "childReader", Read: []int64{child.ID}}, cb, codes.OK},
		{auth.Principal{Name: "childReader", Read: []int64{child.ID}}, "4", codes.PermissionDenied},
		{auth.Principal{Name: "writer", Write: []int64{4}}, "4", codes.OK},
		{auth.Principal{Name: "nobody"}, "4", codes.PermissionDenied},
		{auth.Principal{Name: "admin", Admin: true}, cb, codes.OK},
	}
	for _, c := range cases {
		req := &deliveryv1.GetRequest{Branch: c.branch, Id: "home"}
		_, err := h.authz.Unary(as(c.who), req, &grpc.UnaryServerInfo{FullMethod: deliveryv1.DeliveryService_Get_FullMethodName},
			func(ctx context.Context, _ any) (any, error) { return h.api().Get(ctx, req) })
		if status.Code(err) != c.want {
			t.Errorf("%s on branch %s: %v, want %v", c.who.Name, c.branch, err, c.want)
		}
	}
	// The branch list is open to every user and lists the readable
	// branches (issue: it was 403 for every non-admin).
	lists := []struct {
		who  auth.Principal
		want []int64
	}{
		{auth.Principal{Name: "nobody"}, nil},
		{auth.Principal{Name: "childReader", Read: []int64{child.ID}}, []int64{child.ID}},
		{auth.Principal{Name: "reader", Read: []int64{4}}, []int64{4, child.ID}},
		{auth.Principal{Name: "admin", Admin: true}, []int64{4, child.ID}},
	}
	for _, l := range lists {
		req := &deliveryv1.GetBranchesRequest{}
		out, err := h.authz.Unary(as(l.who), req, &grpc.UnaryServerInfo{FullMethod: deliveryv1.DeliveryService_GetBranches_FullMethodName},
			func(ctx context.Context, _ any) (any, error) { return h.api().GetBranches(ctx, req) })
		if err != nil {
			t.Fatalf("%s: branch list: %v", l.who.Name, err)
		}
		var got []int64
		for _, b := range out.(*deliveryv1.BranchList).GetBranches() {
			got = append(got, int64(b.GetMeta().GetId()))
		}
		if !slices.Equal(got, l.want) {
			t.Errorf("%s: branch list %v, want %v", l.who.Name, got, l.want)
		}
	}
}
