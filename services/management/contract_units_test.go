package management_test

import (
	"fmt"
	"strings"
	"testing"
)

// contractUnits: CmsValue.unitRef end to end. A unit group, two units of it
// and one of another group; an attribute naming its unit (1003); values
// with and without unitRef read back as sent; a unit of another group and a
// non-unit are 400.
func contractUnits(t *testing.T, cl *client) {
	groups := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: `{"comment":"unit groups","objects":[
		{"meta":{"typeRef":31},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Length"}]},
		{"meta":{"typeRef":31},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Mass"}]}]}`}), 2)
	units := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":"units","objects":[
		{"meta":{"typeRef":30},"values":[{"attribute":3003,"language":0,"variant":0,"value":"mm"},{"attribute":3002,"language":0,"variant":0,"value":%d}]},
		{"meta":{"typeRef":30},"values":[{"attribute":3003,"language":0,"variant":0,"value":"m"},{"attribute":3002,"language":0,"variant":0,"value":%d}]},
		{"meta":{"typeRef":30},"values":[{"attribute":3003,"language":0,"variant":0,"value":"kg"},{"attribute":3002,"language":0,"variant":0,"value":%d}]}]}`,
		groups[0], groups[0], groups[1])}), 3)
	mm, m, kg := units[0], units[1], units[2]
	model := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":"model","objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"unitProduct"}},
		{"meta":{"typeRef":10,"apiIdentifier":"unitLength"},"values":[
			{"attribute":1001,"language":0,"variant":0,"value":"Decimal"},{"attribute":1003,"language":0,"variant":0,"value":%d}]},
		{"meta":{"typeRef":10,"apiIdentifier":"unitCount"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"Integer"}]}]}`, mm)}), 3)
	typ, length, count := model[0], model[1], model[2]

	obj := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"typeRef":%d},"values":[
			{"attribute":%d,"language":0,"variant":0,"value":1.5,"sortReverse":null,"unitRef":%d},
			{"attribute":%d,"language":0,"variant":0,"value":3,"sortReverse":null,"unitRef":null}]}]}`, typ, length, m, count)}), 1)[0]
	got := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: fmt.Sprintf("/branches/4/objects/%d", obj)})
	values, _ := got.json(t)["values"].([]any)
	if len(values) != 2 {
		t.Fatalf("values %s", got.body)
	}
	for _, v := range values {
		vm := v.(map[string]any)
		switch num(vm["attribute"]) {
		case length:
			if num(vm["unitRef"]) != m {
				t.Errorf("length unitRef %v, want %d: %s", vm["unitRef"], m, got.body)
			}
		case count:
			if u, has := vm["unitRef"]; has && u != nil {
				t.Errorf("a value without unit reads back with unitRef %v", u)
			}
		}
	}
	// The unit survives a read/write round trip; another group's unit and a
	// non-unit are refused.
	cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"id":%d,"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":1500,"sortReverse":null,"unitRef":%d}]}]}`, obj, typ, length, mm)})
	for _, unit := range []int{kg, typ} {
		r := cl.do(t, 400, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
			{"meta":{"id":%d,"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":2,"unitRef":%d}]}]}`, obj, typ, length, unit)})
		if !strings.Contains(string(r.body), "unit") {
			t.Errorf("unitRef %d refused without naming the unit: %s", unit, r.body)
		}
	}
	after := cl.do(t, 200, call{op: "Cms_GetObjects", method: "GET", path: fmt.Sprintf("/branches/4/objects?ids=%d&attributes=%d", obj, length)})
	if !strings.Contains(string(after.body), fmt.Sprintf(`"unitRef":%d`, mm)) || !strings.Contains(string(after.body), `"value":1500`) {
		t.Fatalf("after update %s", after.body)
	}
}

// contractChildLastTransaction: meta.lastTransaction counts local changes
// on the branch read only (the document: "when local values of this object
// have been changed on the current branch"), while the ETag still moves
// with an inherited change.
func contractChildLastTransaction(t *testing.T, cl *client) {
	br := cl.do(t, 200, call{op: "Cms_CreateBranch", method: "POST", path: "/branches", body: `{"comment":null,"values":[
		{"attribute":1000,"language":201,"variant":0,"value":"Inheriting"},{"attribute":4000,"language":0,"variant":0,"value":4}]}`})
	child := fmt.Sprintf("/branches/%d", num(meta(t, br)["id"]))
	create := cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: `{"comment":null,"objects":[
		{"meta":{"typeRef":50},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Parent form"}]}]}`})
	obj := ids(t, create, 1)[0]
	path := fmt.Sprintf("%s/objects/%d", child, obj)
	first := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: path})
	if lt := meta(t, first)["lastTransaction"]; num(lt) != 0 {
		t.Fatalf("inherited object on the child: lastTransaction %v, want 0", lt)
	}
	tag := first.header.Get("ETag")
	cl.do(t, 304, call{op: "Cms_GetObject", method: "GET", path: path, header: map[string]string{"If-None-Match": tag}})

	// A change on the parent: same local view, new ETag.
	up := cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"id":%d,"typeRef":50},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Parent form 2"}]}]}`, obj)}).json(t)
	second := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: path, header: map[string]string{"If-None-Match": tag}})
	if num(meta(t, second)["lastTransaction"]) != 0 || second.header.Get("ETag") == tag {
		t.Fatalf("after a parent change: lastTransaction %v, ETag %s (before %s)", meta(t, second)["lastTransaction"], second.header.Get("ETag"), tag)
	}
	parent := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: fmt.Sprintf("/branches/4/objects/%d", obj)})
	ptx := up["transaction"].(map[string]any)["id"]
	if num(meta(t, parent)["lastTransaction"]) != num(ptx) {
		t.Fatalf("parent lastTransaction %v, want %v", meta(t, parent)["lastTransaction"], ptx)
	}

	// A local change on the child sets it.
	local := cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: child + "/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"id":%d,"typeRef":50},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Child form"}]}]}`, obj)}).json(t)
	third := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: path})
	if want := local["transaction"].(map[string]any)["id"]; num(meta(t, third)["lastTransaction"]) != num(want) {
		t.Fatalf("child lastTransaction after a local change %v, want %v", meta(t, third)["lastTransaction"], want)
	}
}
