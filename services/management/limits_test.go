package management

import (
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
)

// TestValueTooLarge: a value over content.DefaultMaxValueBytes is a 413
// ProblemDetails naming the attribute and the limit, on create and update.
func TestValueTooLarge(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("a", content.DefaultMaxValueBytes)
	r := h.expect(t, 413, "POST", "/branches/4/objects",
		`{"objects":[{"meta":{"typeRef":0},"values":[{"attribute":1000,"language":201,"variant":0,"value":"`+big+`"}]}]}`)
	for _, want := range []string{"attribute 1000", "limit is 1048576 bytes"} {
		if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, want) {
			t.Errorf("detail %q does not say %q", d, want)
		}
	}
	h.expect(t, 201, "POST", "/branches/4/objects",
		`{"objects":[{"meta":{"typeRef":0},"values":[{"attribute":1000,"language":201,"variant":0,"value":"`+big[:1000]+`"}]}]}`)
	h.expect(t, 413, "POST", "/branches",
		`{"values":[{"attribute":1000,"language":201,"variant":0,"value":"`+big+`"}]}`)
}
