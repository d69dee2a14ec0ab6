package management_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// contractClientShapes sends what generated .NET (NSwag/Newtonsoft)
// clients send: every nullable field present as null, objects addressed by
// Guid only, and a CmsObject read back and sent unchanged in an update.
func contractClientShapes(t *testing.T, cl *client) {
	r := cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: `{"comment":null,"objects":[
		{"meta":{"typeRef":50,"apiIdentifier":null},"values":[
			{"attribute":1000,"variant":0,"language":201,"value":"Nulls","sortReverse":null,"unitRef":null}]}]}`})
	id := ids(t, r, 1)[0]
	got := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: fmt.Sprintf("/branches/4/objects/%d", id)})
	m := meta(t, got)
	if _, has := m["apiIdentifier"]; has && m["apiIdentifier"] != nil {
		t.Errorf("apiIdentifier null on create became %v", m["apiIdentifier"])
	}
	guid, _ := m["guid"].(string)

	// Update addressed by Guid only (the document: "Either an ID or a Guid").
	u := cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"guid":%q,"typeRef":50},"values":[{"attribute":1000,"variant":0,"language":201,"value":"By guid","sortReverse":null,"unitRef":null}]}]}`, guid)}).json(t)
	if int(u["updatedObjects"].(float64)) != 1 {
		t.Fatalf("update by guid = %v", u)
	}

	// Round trip: the object as read, sent back as an update.
	var obj map[string]any
	if err := json.Unmarshal(cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: "/branches/4/objects/" + guid}).body, &obj); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"comment": "round trip", "objects": []any{obj}})
	cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: string(body)})
	after := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: "/branches/4/objects/" + guid})
	if !strings.Contains(string(after.body), `"value":"By guid"`) {
		t.Fatalf("after round trip %s", after.body)
	}

	// Branches addressed by Guid.
	br := cl.do(t, 200, call{op: "Cms_CreateBranch", method: "POST", path: "/branches", body: `{"comment":null,"values":[
		{"attribute":1000,"variant":0,"language":201,"value":"Guid branch","sortReverse":null,"unitRef":null},
		{"attribute":4000,"variant":0,"language":0,"value":4,"sortReverse":null,"unitRef":null}]}`})
	bg, _ := meta(t, br)["guid"].(string)
	cl.do(t, 200, call{op: "Cms_GetBranch", method: "GET", path: "/branches/" + bg})
	cl.do(t, 200, call{op: "Cms_UpdateBranch", method: "PATCH", path: "/branches/" + bg,
		body: `{"comment":null,"values":[{"attribute":1000,"variant":0,"language":202,"value":"Guid-Zweig","sortReverse":null,"unitRef":null}]}`})
	cl.do(t, 200, call{op: "Cms_DeleteBranch", method: "DELETE", path: "/branches/" + bg, body: `{"comment":null}`})
}
