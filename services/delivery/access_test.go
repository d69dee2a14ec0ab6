package delivery

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestReadGrants: a user with a read grant reads its branch and the
// branches below it, cached or not; without one it gets 403.
func TestReadGrants(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	name, _ := json.Marshal("Child")
	child, _, err := h.site.Content.CreateBranch(ctx, content.Change{User: "editor"}, []content.ValueInput{
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
		_, err := h.api().Get(as(c.who), &deliveryv1.GetRequest{Branch: c.branch, Id: "home"})
		if status.Code(err) != c.want {
			t.Errorf("%s on branch %s: %v, want %v", c.who.Name, c.branch, err, c.want)
		}
	}
	if _, err := h.api().GetBranches(as(auth.Principal{Name: "nobody"}), &deliveryv1.GetBranchesRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("branch list without grants: %v", err)
	}
}
