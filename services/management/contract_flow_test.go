package management_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/services/internal/app"
)

// implementedOps must each have at least one validated exchange.
var implementedOps = []string{
	"Cms_GetBranches", "Cms_CreateBranch", "Cms_GetBranch", "Cms_UpdateBranch", "Cms_DeleteBranch",
	"Cms_GetObject", "Cms_GetObjects", "Cms_CreateObjects", "Cms_UpdateObjects", "Cms_DeleteObjects",
	"Cms_GetTypedObjects", "Identity_GetUserDisplayName",
	"CodeGenerator_GetCSharpClasses", "CodeGenerator_GetCSharpClass",
}

func TestContractSQLite(t *testing.T) { runContract(t, app.Component{}) }

func TestContractPostgres(t *testing.T) {
	runContract(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

func runContract(t *testing.T, store app.Component) {
	base, grpcAddr := startSystem(t, store)
	cl := &client{base: base, grpc: newGRPCBridge(t, grpcAddr), doc: contractDoc(t), seen: map[string]int{}}
	t.Run("DocumentExamples", func(t *testing.T) { documentExamples(t, cl) })
	t.Run("Flow", func(t *testing.T) { contractFlow(t, cl) })
	t.Run("Errors", func(t *testing.T) { contractErrors(t, cl) })
	t.Run("Users", func(t *testing.T) { contractUsers(t, cl) })
	t.Run("ClientShapes", func(t *testing.T) { contractClientShapes(t, cl) })
	t.Run("Units", func(t *testing.T) { contractUnits(t, cl) })
	t.Run("ChildLastTransaction", func(t *testing.T) { contractChildLastTransaction(t, cl) })
	t.Run("CodeGenerator", func(t *testing.T) { contractCodeGenerator(t, cl) })
	total := 0
	for _, op := range implementedOps {
		if cl.seen[op] == 0 {
			t.Errorf("%s: no exchange validated", op)
		}
		total += cl.seen[op]
	}
	t.Logf("%d exchanges validated against the document: %v", total, cl.seen)
}

// documentExamples sends every request example cms-6.0.json gives for the
// implemented operations. The document (6.0.0.18) has none: the count is
// asserted so that a new document with examples makes this test send them.
func documentExamples(t *testing.T, cl *client) {
	n := 0
	for _, op := range implementedOps {
		for _, ex := range cl.doc.RequestExamples(op) {
			n++
			t.Errorf("%s has a request example %v: send it here and expect no 400", op, ex)
		}
	}
	t.Logf("cms-6.0.json holds %d request examples for the implemented operations; docs/api-reference.md §5.3 examples are sent in Flow", n)
}

func meta(t *testing.T, r reply) map[string]any {
	t.Helper()
	m, ok := r.json(t)["meta"].(map[string]any)
	if !ok {
		t.Fatalf("no meta in %s", r.body)
	}
	return m
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func ids(t *testing.T, r reply, want int) []int {
	t.Helper()
	raw, _ := r.json(t)["createdObjectIds"].([]any)
	if len(raw) != want {
		t.Fatalf("createdObjectIds %s, want %d ids", r.body, want)
	}
	out := make([]int, len(raw))
	for i, v := range raw {
		out[i] = num(v)
	}
	return out
}

func contractFlow(t *testing.T, cl *client) {
	// Branches: list, create (docs/api-reference.md §5.3 example), read, 304, update.
	list := cl.do(t, 200, call{op: "Cms_GetBranches", method: "GET", path: "/branches"}).json(t)
	if num(list["count"]) != 1 || list["continue"] != nil {
		t.Fatalf("initial branches = %v", list)
	}
	br := cl.do(t, 200, call{op: "Cms_CreateBranch", method: "POST", path: "/branches", body: `{"comment":"new","values":[
		{"attribute":1000,"language":201,"variant":0,"value":"Spring"},{"attribute":4000,"language":0,"variant":0,"value":4}]}`})
	if num(meta(t, br)["typeRef"]) != 40 {
		t.Fatalf("branch object %s", br.body)
	}
	b := num(meta(t, br)["id"])
	bp := fmt.Sprintf("/branches/%d", b)
	get := cl.do(t, 200, call{op: "Cms_GetBranch", method: "GET", path: bp + "?attributes=1000&languages=201"})
	if !strings.Contains(string(get.body), `"value":"Spring"`) || strings.Contains(string(get.body), `"attribute":4000`) {
		t.Fatalf("projected branch %s", get.body)
	}
	cl.do(t, 304, call{op: "Cms_GetBranch", method: "GET", path: bp + "?attributes=1000&languages=201",
		header: map[string]string{"If-None-Match": get.header.Get("ETag")}})
	up := cl.do(t, 200, call{op: "Cms_UpdateBranch", method: "PATCH", path: bp,
		header: map[string]string{"X-CmsApi-Username": "admin"},
		body:   `{"comment":"rename","values":[{"attribute":1000,"language":202,"variant":0,"value":"Frühling"}]}`}).json(t)
	tr, _ := up["transaction"].(map[string]any)
	if num(up["createdValues"]) != 1 || tr["user"] != "admin" || tr["comment"] != "rename" {
		t.Fatalf("update branch = %v", up)
	}
	cl.do(t, 200, call{op: "Cms_GetBranch", method: "GET", path: bp + "?attributes=1000",
		header: map[string]string{"If-None-Match": get.header.Get("ETag")}})
	p1 := cl.do(t, 200, call{op: "Cms_GetBranches", method: "GET", path: "/branches?take=1&attributes=1000&languages=201"}).json(t)
	cont, _ := p1["continue"].(string)
	if num(p1["count"]) != 1 || cont == "" {
		t.Fatalf("branches page 1 = %v", p1)
	}
	p2 := cl.do(t, 200, call{op: "Cms_GetBranches", method: "GET", path: "/branches?take=1&continue=" + url.QueryEscape(cont)}).json(t)
	if num(p2["count"]) != 1 || p2["continue"] != nil {
		t.Fatalf("branches page 2 = %v", p2)
	}

	// The model on branch 4: a type, a language-dependent string attribute,
	// two forms (targets of the multi-valued ObjRef 5002 example).
	setup := cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: `{"comment":"setup","objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"contractArticle"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Article"}]},
		{"meta":{"typeRef":10,"apiIdentifier":"contractTitle"},"values":[
			{"attribute":1001,"language":0,"variant":0,"value":"String"},{"attribute":1017,"language":0,"variant":0,"value":true}]},
		{"meta":{"typeRef":50},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Form A"}]},
		{"meta":{"typeRef":50},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Form B"}]}]}`})
	created := ids(t, setup, 4)
	typ, formA, formB := created[0], created[2], created[3]
	if st := setup.json(t)["transaction"].(map[string]any); num(st["branchRef"]) != 4 || st["comment"] != "setup" || st["user"] != "admin" {
		t.Fatalf("transaction %v", st)
	}

	title := created[1]

	// Objects in the child branch (docs/api-reference.md §5.3 create example).
	op := bp + "/objects"
	objs := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: op, body: fmt.Sprintf(`{"comment":"setup","objects":[
		{"meta":{"typeRef":%d,"apiIdentifier":"myThing"},"values":[
			{"attribute":1000,"language":201,"variant":0,"value":"Example"},
			{"attribute":1000,"language":202,"variant":0,"value":"Beispiel"},
			{"attribute":%d,"language":201,"variant":0,"value":"Hello"},
			{"attribute":%d,"language":202,"variant":0,"value":"Hallo"}]},
		{"meta":{"typeRef":%d},"values":[]}]}`, typ, title, title, typ)}), 2)
	thing, other := objs[0], objs[1]

	// Reads with projections, by ApiIdentifier, id and Guid; 304.
	proj := "?inherited=true&attributes=contractTitle&languages=languageEnglishUS"
	one := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: op + "/myThing" + proj})
	m := meta(t, one)
	vals, _ := one.json(t)["values"].([]any)
	if num(m["id"]) != thing || num(m["typeRef"]) != typ || m["apiIdentifier"] != "myThing" || len(vals) != 1 ||
		!strings.Contains(string(one.body), fmt.Sprintf(`{"attribute":%d,"variant":0,"language":201,"value":"Hello"`, title)) {
		t.Fatalf("projected object %s", one.body)
	}
	etag := one.header.Get("ETag")
	cl.do(t, 304, call{op: "Cms_GetObject", method: "GET", path: op + "/myThing" + proj, header: map[string]string{"If-None-Match": etag}})
	for _, id := range []string{fmt.Sprint(thing), m["guid"].(string)} {
		r := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: op + "/" + id + proj})
		if r.header.Get("ETag") != etag {
			t.Errorf("GET by %s: ETag %s, by ApiIdentifier %s", id, r.header.Get("ETag"), etag)
		}
	}
	inh := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: op + "/contractArticle?inherited=true&languages=201"})
	if !strings.Contains(string(inh.body), `"value":"Article"`) {
		t.Fatalf("inherited type object %s", inh.body)
	}
	cl.do(t, 404, call{op: "Cms_GetObject", method: "GET", path: fmt.Sprintf("/branches/4/objects/%d", thing)})

	many := cl.do(t, 200, call{op: "Cms_GetObjects", method: "GET", path: fmt.Sprintf("%s?ids=%d,myThing&attributes=1000&languages=202", op, other)})
	if ml := many.json(t); num(ml["count"]) != 2 || ml["continue"] != nil || !strings.Contains(string(many.body), `"value":"Beispiel"`) {
		t.Fatalf("GetObjects = %s", many.body)
	}
	cl.do(t, 304, call{op: "Cms_GetObjects", method: "GET", path: fmt.Sprintf("%s?ids=%d,myThing&attributes=1000&languages=202", op, other),
		header: map[string]string{"If-None-Match": many.header.Get("ETag")}})

	typed := bp + "/types/contractArticle/objects"
	t1 := cl.do(t, 200, call{op: "Cms_GetTypedObjects", method: "GET", path: typed + "?take=1&inherited=true&deleted=false"})
	tc, _ := t1.json(t)["continue"].(string)
	if num(t1.json(t)["count"]) != 1 || tc == "" {
		t.Fatalf("typed page 1 = %s", t1.body)
	}
	cl.do(t, 304, call{op: "Cms_GetTypedObjects", method: "GET", path: typed + "?take=1&inherited=true&deleted=false",
		header: map[string]string{"If-None-Match": t1.header.Get("ETag")}})
	t2 := cl.do(t, 200, call{op: "Cms_GetTypedObjects", method: "GET", path: typed + "?take=1&inherited=true&deleted=false&continue=" + url.QueryEscape(tc)}).json(t)
	if num(t2["count"]) != 1 || t2["continue"] != nil {
		t.Fatalf("typed page 2 = %v", t2)
	}

	// Updates: a title (the old ETag stops matching), and the
	// docs/api-reference.md §5.3 multi-valued example (5002 on the type, two rows).
	u := cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: op, body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"id":%d,"typeRef":%d},"values":[{"attribute":%d,"language":201,"variant":0,"value":"Hi"}]}]}`, thing, typ, title)}).json(t)
	if num(u["updatedObjects"]) != 1 || num(u["createdValues"]) != 1 {
		t.Fatalf("update = %v", u)
	}
	after := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: op + "/myThing" + proj, header: map[string]string{"If-None-Match": etag}})
	if !strings.Contains(string(after.body), `"value":"Hi"`) || after.header.Get("ETag") == etag {
		t.Fatalf("after update %s (ETag %s)", after.body, after.header.Get("ETag"))
	}
	mv := cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects", body: fmt.Sprintf(`{"comment":null,"objects":[
		{"meta":{"id":%d,"typeRef":0},"values":[
			{"attribute":5002,"language":0,"variant":0,"value":%d,"sortReverse":0},
			{"attribute":5002,"language":0,"variant":0,"value":%d,"sortReverse":1}]}]}`, typ, formA, formB)}).json(t)
	if num(mv["updatedObjects"]) != 1 || num(mv["createdValues"]) != 2 {
		t.Fatalf("multi-valued update = %v", mv)
	}
	forms := cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: fmt.Sprintf("/branches/4/objects/%d?attributes=5002", typ)})
	if fv, _ := forms.json(t)["values"].([]any); len(fv) != 2 {
		t.Fatalf("5002 values %s", forms.body)
	}

	// Delete (docs/api-reference.md §5.3 example: an id and an ApiIdentifier), soft.
	d := cl.do(t, 200, call{op: "Cms_DeleteObjects", method: "DELETE", path: op,
		body: fmt.Sprintf(`{"comment":null,"objectIds":["%d","myThing"]}`, other)}).json(t)
	if num(d["deletedObjects"]) != 2 {
		t.Fatalf("delete = %v", d)
	}
	if gone := meta(t, cl.do(t, 200, call{op: "Cms_GetObject", method: "GET", path: op + "/myThing"})); gone["deleted"] != true {
		t.Fatalf("deleted object meta %v", gone)
	}
	for q, want := range map[string]int{"?deleted=true": 2, "?deleted=false": 0, "": 2} {
		l := cl.do(t, 200, call{op: "Cms_GetTypedObjects", method: "GET", path: typed + q}).json(t)
		if num(l["count"]) != want {
			t.Errorf("typed %q count = %v, want %d", q, l["count"], want)
		}
	}

	// Branch deletion is permanent.
	del := cl.do(t, 200, call{op: "Cms_DeleteBranch", method: "DELETE", path: bp, body: `{"comment":"done"}`}).json(t)
	if dt, _ := del["transaction"].(map[string]any); dt["comment"] != "done" {
		t.Fatalf("delete branch = %v", del)
	}
	cl.do(t, 404, call{op: "Cms_GetBranch", method: "GET", path: bp})
	cl.do(t, 404, call{op: "Cms_GetObject", method: "GET", path: op + "/myThing"})
}

// contractUsers creates three user objects (admin only) and reads display
// names: 200 and 304, 422 for a name two users share (case-insensitive).
func contractUsers(t *testing.T, cl *client) {
	cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects", body: `{"objects":[
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"alice"},
			{"attribute":1000,"language":201,"variant":0,"value":"Alice"}]},
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"bob"}]},
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"BOB"}]}]}`})
	alice := cl.do(t, 200, call{op: "Identity_GetUserDisplayName", method: "GET", path: "/users/alice"})
	if num(meta(t, alice)["typeRef"]) != 110 || !strings.Contains(string(alice.body), `"value":"Alice"`) {
		t.Fatalf("user %s", alice.body)
	}
	cl.do(t, 304, call{op: "Identity_GetUserDisplayName", method: "GET", path: "/users/alice", header: map[string]string{"If-None-Match": alice.header.Get("ETag")}})
	cl.do(t, 422, call{op: "Identity_GetUserDisplayName", method: "GET", path: "/users/bob"})
	cl.do(t, 404, call{op: "Identity_GetUserDisplayName", method: "GET", path: "/users/nobody"})

}
