package management_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestRestoreByPatch: over REST, PATCH with meta.deleted false restores a
// soft-deleted object; a PATCH without meta.deleted leaves it deleted;
// meta.deleted true is 400; answers always write meta.deleted.
func TestRestoreByPatch(t *testing.T) {
	base, _ := startSystem(t, app.Component{})
	c := docClient{base: base, doc: contractDoc(t)}
	created := c.do(t, 201, "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":0},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Lamp"}]}]}`).object(t)
	id := int(created["createdObjectIds"].([]any)[0].(float64))
	deleted := func() any {
		return c.do(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d", id), "").object(t)["meta"].(map[string]any)["deleted"]
	}
	if d := deleted(); d != false {
		t.Fatalf("meta.deleted of a live object = %v, want false", d)
	}
	c.do(t, 200, "DELETE", "/branches/4/objects", fmt.Sprintf(`{"objectIds":["%d"]}`, id))
	c.do(t, 200, "PATCH", "/branches/4/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[]}]}`, id))
	if d := deleted(); d != true {
		t.Fatalf("after a PATCH without meta.deleted: deleted = %v, want true", d)
	}
	if d := c.do(t, 400, "PATCH", "/branches/4/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"deleted":true}}]}`, id)).detail(t); !strings.Contains(d, "DELETE") {
		t.Fatalf("meta.deleted true: %q", d)
	}
	c.do(t, 200, "PATCH", "/branches/4/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"deleted":false}}]}`, id))
	if d := deleted(); d != false {
		t.Fatalf("after the restore: deleted = %v, want false", d)
	}
}
