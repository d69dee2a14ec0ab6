package management

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/gatewaytest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// harness runs the Management group in-process: SQLite in a temp dir, the
// bootstrapped domain, a gRPC server on a random port (with a stand-in for
// the auth interceptor) and the gateway mux over HTTP.
type harness struct {
	client managementv1.ManagementServiceClient
	url    string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := content.New(st, nil)
	g, err := New(Options{Content: svc})
	if err != nil {
		t.Fatal(err)
	}
	editor := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(auth.WithPrincipal(ctx, auth.Principal{Name: "editor", Admin: true}), req)
	}
	conn, url := gatewaytest.Serve(t, g, []grpc.UnaryServerInterceptor{editor})
	return &harness{client: managementv1.NewManagementServiceClient(conn), url: url + BasePath}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

func (h *harness) do(t *testing.T, method, path, body string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (h *harness) expect(t *testing.T, want int, method, path, body string, hdr ...string) response {
	t.Helper()
	r := h.do(t, method, path, body, hdr...)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if want >= 400 && !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%s %s: error without ProblemDetails: %s %s", method, path, r.header.Get("Content-Type"), r.body)
	}
	return r
}

func num(m map[string]any, path ...string) int {
	var cur any = m
	for _, p := range path {
		cur = cur.(map[string]any)[p]
	}
	return int(cur.(float64))
}

func firstID(t *testing.T, r response) int {
	t.Helper()
	ids := r.json(t)["createdObjectIds"].([]any)
	if len(ids) == 0 {
		t.Fatalf("no ids in %s", r.body)
	}
	return int(ids[0].(float64))
}

// TestObjectFlow: type → attribute → object in a child branch → read with
// projections and ETag → update → typed list → delete, over HTTP.
func TestObjectFlow(t *testing.T) {
	h := newHarness(t)
	br := h.expect(t, 200, "POST", "/branches", `{"comment":"new","values":[
		{"attribute":1000,"language":201,"variant":0,"value":"Spring"},
		{"attribute":4000,"language":0,"variant":0,"value":4}]}`).json(t)
	branch := num(br, "meta", "id")
	if num(br, "meta", "typeRef") != 40 {
		t.Fatalf("branch object %v", br)
	}

	r := h.expect(t, 201, "POST", "/branches/4/objects", `{"comment":"setup","objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"article"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Article"}]}]}`)
	typ := firstID(t, r)
	tr := r.json(t)["transaction"].(map[string]any)
	if tr["user"] != "editor" || tr["comment"] != "setup" || num(r.json(t), "transaction", "branchRef") != 4 {
		t.Fatalf("transaction %v", tr)
	}
	title := firstID(t, h.expect(t, 201, "POST", "/branches/branchDefault/objects", `{"objects":[
		{"meta":{"typeRef":10,"apiIdentifier":"title"},"values":[
			{"attribute":1001,"language":0,"variant":0,"value":"String"},
			{"attribute":1017,"language":0,"variant":0,"value":true}]}]}`))
	objPath := fmt.Sprintf("/branches/%d/objects", branch)
	obj := firstID(t, h.expect(t, 201, "POST", objPath, fmt.Sprintf(`{"objects":[
		{"meta":{"typeRef":%d,"apiIdentifier":"home"},"values":[
			{"attribute":1000,"language":201,"variant":0,"value":"Home"},
			{"attribute":%d,"language":201,"variant":0,"value":"Hello"},
			{"attribute":%d,"language":202,"variant":0,"value":"Hallo"}]}]}`, typ, title, title)))

	// Read with projections: only the English title.
	get := h.expect(t, 200, "GET", objPath+"/home?inherited=true&attributes=title&languages=languageEnglishUS", "")
	want := fmt.Sprintf(`{"meta":{"id":%d,"guid":%q,"apiIdentifier":"home","typeRef":%d,"lastTransaction":%d,"deleted":false},`+
		`"values":[{"attribute":%d,"variant":0,"language":201,"value":"Hello","sortReverse":0}]}`,
		obj, get.json(t)["meta"].(map[string]any)["guid"], typ, num(get.json(t), "meta", "lastTransaction"), title)
	if string(get.body) != want {
		t.Fatalf("GET object:\n got %s\nwant %s", get.body, want)
	}
	etag := get.header.Get("ETag")
	if len(etag) != 24 {
		t.Fatalf("ETag %q", etag)
	}
	nm := h.expect(t, 304, "GET", objPath+"/home?inherited=true&attributes=title&languages=languageEnglishUS", "", "If-None-Match", etag)
	if len(nm.body) != 0 || nm.header.Get("ETag") != etag {
		t.Fatalf("304 with body %q / ETag %q", nm.body, nm.header.Get("ETag"))
	}
	// The object is not visible on the parent branch.
	h.expect(t, 404, "GET", fmt.Sprintf("/branches/4/objects/%d", obj), "")

	list := h.expect(t, 200, "GET", objPath+fmt.Sprintf("?ids=%d,home&attributes=1000", obj), "").json(t)
	if num(list, "count") != 2 || list["continue"] != nil {
		t.Fatalf("GetObjects = %v", list)
	}

	// Update the title, then the old ETag no longer matches.
	up := h.expect(t, 200, "PATCH", objPath, fmt.Sprintf(`{"comment":null,"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[
		{"attribute":%d,"language":201,"variant":0,"value":"Hi"}]}]}`, obj, typ, title)).json(t)
	if num(up, "updatedObjects") != 1 || num(up, "createdValues") != 1 {
		t.Fatalf("update = %v", up)
	}
	after := h.expect(t, 200, "GET", objPath+"/home?inherited=true&attributes=title&languages=languageEnglishUS", "", "If-None-Match", etag)
	if !strings.Contains(string(after.body), `"value":"Hi"`) || after.header.Get("ETag") == etag {
		t.Fatalf("after update: %s (ETag %s)", after.body, after.header.Get("ETag"))
	}

	// Typed list with paging.
	h.expect(t, 201, "POST", objPath, fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d}}]}`, typ))
	page := h.expect(t, 200, "GET", fmt.Sprintf("/branches/%d/types/article/objects?take=1&inherited=true", branch), "").json(t)
	if num(page, "count") != 1 || page["continue"] == nil {
		t.Fatalf("typed page 1 = %v", page)
	}
	page2 := h.expect(t, 200, "GET", fmt.Sprintf("/branches/%d/types/article/objects?take=1&continue=%s", branch, page["continue"]), "").json(t)
	if num(page2, "count") != 1 || page2["continue"] != nil {
		t.Fatalf("typed page 2 = %v", page2)
	}

	// Delete (soft) and read back.
	del := h.expect(t, 200, "DELETE", objPath, `{"comment":null,"objectIds":["home"]}`).json(t)
	if num(del, "deletedObjects") != 1 {
		t.Fatalf("delete = %v", del)
	}
	gone := h.expect(t, 200, "GET", objPath+"/home", "").json(t)
	if gone["meta"].(map[string]any)["deleted"] != true {
		t.Fatalf("deleted object = %v", gone)
	}

	// Branch read, update, list, delete.
	bget := h.expect(t, 200, "GET", fmt.Sprintf("/branches/%d?attributes=1000", branch), "")
	h.expect(t, 304, "GET", fmt.Sprintf("/branches/%d?attributes=1000", branch), "", "If-None-Match", "W/"+bget.header.Get("ETag"))
	bu := h.expect(t, 200, "PATCH", fmt.Sprintf("/branches/%d", branch), `{"values":[{"attribute":1000,"language":202,"variant":0,"value":"Frühling"}]}`).json(t)
	if num(bu, "createdValues") != 1 {
		t.Fatalf("update branch = %v", bu)
	}
	bl := h.expect(t, 200, "GET", "/branches?take=100", "").json(t)
	if num(bl, "count") != 2 {
		t.Fatalf("branches = %v", bl)
	}
	h.expect(t, 200, "DELETE", fmt.Sprintf("/branches/%d", branch), `{"comment":"done"}`)
	h.expect(t, 404, "GET", fmt.Sprintf("/branches/%d", branch), "")
}

// TestErrors checks the status of each domain error over HTTP and gRPC.
func TestErrors(t *testing.T) {
	h := newHarness(t)
	typ := firstID(t, h.expect(t, 201, "POST", "/branches/4/objects",
		`{"objects":[{"meta":{"typeRef":0,"guid":"a1b2c3d4-0000-4000-8000-00000000000a","apiIdentifier":"thing"}}]}`))
	h.expect(t, 201, "POST", "/branches/4/objects",
		fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d,"apiIdentifier":"a1b2c3d4-0000-4000-8000-00000000000a"}}]}`, typ))

	cases := []struct {
		name, method, path, body string
		http                     int
		detail                   string
	}{
		{"unknown object", "GET", "/branches/4/objects/999999", "", 404, "not found"},
		{"unknown branch", "GET", "/branches/nope/objects/1000", "", 404, "branch"},
		{"unknown filter", "GET", "/branches/4/objects/1000?attributes=nope", "", 404, "nope"},
		{"ambiguous id", "GET", "/branches/4/objects/a1b2c3d4-0000-4000-8000-00000000000a", "", 422, "not unique"},
		{"malformed id", "GET", "/branches/4/objects/a%20b", "", 400, "neither"},
		{"wrong data type", "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":10},"values":[{"attribute":1001,"language":0,"variant":0,"value":5}]}]}`, 400, "attribute 1001"},
		{"array value", "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":10},"values":[{"attribute":1015,"language":0,"variant":0,"value":[1,2]}]}]}`, 400, "scalar"},
		{"unknown type", "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":999999}}]}`, 404, "object type"},
		{"ApiIdentifier change", "PATCH", "/branches/4/objects", `{"objects":[{"meta":{"id":1000,"apiIdentifier":"renamed"}}]}`, 403, "cannot change"},
		{"protected type", "DELETE", "/branches/4/objects", `{"objectIds":["typeAttribute"]}`, 400, "protected"},
		{"default branch", "DELETE", "/branches/4", `{}`, 400, "default branch"},
		{"rename a system type", "PATCH", "/branches/4/objects", `{"objects":[{"meta":{"id":40},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Zweig"}]}]}`, 400, "object 40 is a protected system object: its values cannot change"},
		{"a system attribute's data type", "PATCH", "/branches/4/objects", `{"objects":[{"meta":{"id":1014},"values":[{"attribute":1001,"language":0,"variant":0,"value":"String"}]}]}`, 400, "object 1014 is a protected system object"},
		{"a language's ISO code", "PATCH", "/branches/4/objects", `{"objects":[{"meta":{"id":201},"values":[{"attribute":2001,"language":0,"variant":0,"value":"en-GB"}]}]}`, 400, "object 201 is a protected system object: attribute 2001 cannot change"},
		{"the default branch's other values", "PATCH", "/branches/4", `{"values":[{"attribute":2001,"language":0,"variant":0,"value":"xx"}]}`, 400, "object 4 is a protected system object: attribute 2001 cannot change"},
		{"negative maximum of values", "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":10},"values":[{"attribute":1001,"language":0,"variant":0,"value":"String"},{"attribute":1004,"language":0,"variant":0,"value":true},{"attribute":1014,"language":0,"variant":0,"value":-1}]}]}`, 400, "attribute 1014"},
		{"bad token", "GET", "/branches/4/types/thing/objects?continue=xyz", "", 400, "token"},
		{"unknown user", "GET", "/users/nobody", "", 404, "nobody"},
		{"object without meta", "POST", "/branches/4/objects", `{"objects":[{"values":[]}]}`, 400, "meta is required"},
		{"GetObjects without ids", "GET", "/branches/4/objects", "", 400, "ids"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.expect(t, c.http, c.method, c.path, c.body)
			if !strings.Contains(string(r.body), c.detail) {
				t.Fatalf("problem %s does not mention %q", r.body, c.detail)
			}
		})
	}
	_, err := h.client.GetObject(context.Background(), &managementv1.GetObjectRequest{Branch: "4", Id: "a1b2c3d4-0000-4000-8000-00000000000a"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("gRPC ambiguous: %v", err)
	}
	_, err = h.client.GetObject(context.Background(), &managementv1.GetObjectRequest{Branch: "4", Id: "999999"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("gRPC not found: %v", err)
	}
	_, err = h.client.UpdateObjects(context.Background(), &managementv1.UpdateObjectsRequest{Branch: "4",
		Objects: []*managementv1.CmsObject{{Meta: &managementv1.CmsObjectMetadata{Id: int32(content.TypeBranch)},
			Values: []*managementv1.CmsValue{{Attribute: int32(content.AttrName), Language: int32(content.LanguageEnUS), Value: structpb.NewStringValue("Zweig")}}}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "object 40 is a protected system object") {
		t.Fatalf("gRPC rename of a system type: %v", err)
	}
	resp, err := h.client.CreateObjects(context.Background(), &managementv1.CreateObjectsRequest{Branch: "4",
		Objects: []*managementv1.CmsObject{{Meta: &managementv1.CmsObjectMetadata{TypeRef: proto.Int32(int32(typ))}}}})
	if err != nil || len(resp.GetCreatedObjectIds()) != 1 || resp.GetTransaction().GetUser() != "editor" {
		t.Fatalf("gRPC create: %v %v", resp, err)
	}
}

// TestUsers reads a user's display name and the 304/422 answers.
func TestUsers(t *testing.T) {
	h := newHarness(t)
	h.expect(t, 201, "POST", "/branches/4/objects", `{"objects":[
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"alice"},
			{"attribute":1000,"language":201,"variant":0,"value":"Alice"}]},
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"bob"}]},
		{"meta":{"typeRef":110},"values":[{"attribute":1100,"language":0,"variant":0,"value":"BOB"}]}]}`)
	r := h.expect(t, 200, "GET", "/users/alice", "")
	if !strings.Contains(string(r.body), `"value":"Alice"`) || strings.Contains(string(r.body), `"alice"`) {
		t.Fatalf("user = %s", r.body)
	}
	h.expect(t, 304, "GET", "/users/alice", "", "If-None-Match", r.header.Get("ETag"))
	h.expect(t, 422, "GET", "/users/bob", "")
}

// TestWithoutContent: the group exists only with its domain (a process
// without a store registers no Management service).
func TestWithoutContent(t *testing.T) {
	if g, err := New(Options{}); err == nil || g != nil {
		t.Fatalf("New without Content = %v, %v: want an error", g, err)
	}
}
