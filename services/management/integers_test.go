package management_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestLargeIntegers: an Integer value at the exact limit (2^53−1) reads back
// digit for digit through Management, Delivery and Index; one beyond it is
// refused with 400 naming the attribute instead of being rounded.
func TestLargeIntegers(t *testing.T) {
	base, _ := startSystem(t, app.Component{})
	c := adminClient{base: base}
	root := strings.TrimSuffix(base, "/apis/cms/v1")
	created := func(r adminReply) ([]int, int64) {
		var m struct {
			CreatedObjectIds []int
			Transaction      struct{ ID int64 }
		}
		if err := json.Unmarshal(r.body, &m); err != nil || len(m.CreatedObjectIds) == 0 {
			t.Fatalf("create: %s (%v)", r.body, err)
		}
		return m.CreatedObjectIds, m.Transaction.ID
	}
	model, _ := created(c.must(t, 201, "POST", "/branches/4/objects", `{"objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"ledger"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Ledger"}]},
		{"meta":{"typeRef":10,"apiIdentifier":"big"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"Integer"}]}]}`))
	typ, attr := model[0], model[1]
	const maxExact = "9007199254740991"
	objs, tx := created(c.must(t, 201, "POST", "/branches/4/objects", fmt.Sprintf(`{"objects":[
		{"meta":{"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":%s}]}]}`, typ, attr, maxExact)))
	obj := objs[0]

	got := c.must(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d", obj), "")
	if !strings.Contains(string(got.body), `"value":`+maxExact) {
		t.Errorf("Management read: %s", got.body)
	}
	minVersion := "X-Cms-Min-Version"
	dc := adminClient{base: root + "/delivery/api"}
	d := dc.must(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d?props=1", obj), "", minVersion, strconv.FormatInt(tx, 10))
	if !strings.Contains(string(d.body), `"big":`+maxExact) {
		t.Errorf("Delivery read: %s", d.body)
	}
	ic := adminClient{base: root + "/apis/index/v1"}
	for value, want := range map[string]int{maxExact: 1, "9007199254740990": 0} {
		r := ic.must(t, 200, "POST", "/branches/4/objects", fmt.Sprintf(`{"filter":{"objectTypeIds":[%d],"filters":[
			{"attrId":%d,"langId":0,"variantId":0,"value":"%s","compareOperator":0}]},"minChangeTrackingVersion":%d,"maxWaitTime":"PT5S"}`,
			typ, attr, value, tx))
		var m struct{ Objects []struct{ ID int } }
		if err := json.Unmarshal(r.body, &m); err != nil || len(m.Objects) != want || (want == 1 && m.Objects[0].ID != obj) {
			t.Errorf("Index search for %s: %s (%v), want %d hits", value, r.body, err, want)
		}
	}

	for _, v := range []string{"9007199254740993", "-9007199254740993", "9007199254740992"} {
		p := c.must(t, 400, "POST", "/branches/4/objects", fmt.Sprintf(`{"objects":[
			{"meta":{"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":%s}]}]}`, typ, attr, v))
		if !strings.Contains(string(p.body), fmt.Sprintf("attribute %d (Integer)", attr)) {
			t.Errorf("create with %s: %s does not name the attribute", v, p.body)
		}
		c.must(t, 400, "PATCH", "/branches/4/objects", fmt.Sprintf(
			`{"objects":[{"meta":{"id":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":%s}]}]}`, obj, attr, v))
	}
	if after := c.must(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d", obj), ""); !strings.Contains(string(after.body), `"value":`+maxExact) {
		t.Errorf("a refused write changed the value: %s", after.body)
	}
}
