package webhooks

import (
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
)

// TestTypeFilterOnGrandchild: a webhook filtered by a type gets the edit,
// on a grandchild of the default branch, of an object of that type created
// on the grandchild's parent (the object has no row on the grandchild).
func TestTypeFilterOnGrandchild(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		note := e.create(t, objectOf(content.RootID, "Note"))[0]
		branch := func(name string, parent int64) int64 {
			b, _, err := e.content.CreateBranch(t.Context(), admin, []content.ValueInput{vin(content.AttrName, name), vin(content.AttrBranchParent, parent)})
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		}
		middle := branch("middle", content.BranchDefault)
		grand := branch("grand", middle)
		e.create(t, hook(rcv.srv.URL+"/notes", "k", vin(content.AttrWebHookTypes, note)))
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true}})
		_, ids, err := e.content.CreateObjects(t.Context(), strconv.FormatInt(middle, 10), admin, []content.ObjectInput{objectOf(note, "on the middle branch")})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.content.UpdateObjects(t.Context(), strconv.FormatInt(grand, 10), admin, []content.ObjectInput{{ID: ids[0],
			Values: []content.ValueInput{vin(content.AttrName, "edited on the grandchild")}}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the grandchild's edit at /notes", func() bool {
			for _, p := range rcv.payloads("/notes") {
				if p.Event.Transaction == res.Transaction.ID && p.Event.Branch == grand {
					return true
				}
			}
			return false
		})
	})
}
