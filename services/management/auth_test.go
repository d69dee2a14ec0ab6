package management_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"github.com/cmsplatform/cms/services/management"
	"google.golang.org/protobuf/proto"
)

// The auth tests run the whole system with the real Auth interceptor and
// users stored as objects: Basic credentials checked against bcrypt hashes,
// per-branch read/write permissions (403), X-CmsApi-Username for internal
// users only, the password never in a response, and the configured
// administrator written idempotently across restarts.

func TestAuthSQLite(t *testing.T) { runAuth(t, app.Component{}) }

func TestAuthPostgres(t *testing.T) {
	runAuth(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

// TestNoPrincipalIsRefused: served without the Auth interceptor (a wiring
// mistake), the authorization interceptor fails every operation closed
// with 401 before the handler runs (403 when handlers checked by hand).
func TestNoPrincipalIsRefused(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	g, err := management.New(management.Options{Content: content.New(st, nil)})
	if err != nil {
		t.Fatal(err)
	}
	az := &interceptors.Authz{Resolvers: g.BranchResolvers()}
	srv := grpc.NewServer(grpc.UnaryInterceptor(az.Unary))
	g.RegisterGRPC(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := managementv1.NewManagementServiceClient(conn)
	calls := map[string]func() error{
		"GetBranches": func() error { _, err := c.GetBranches(ctx, &managementv1.GetBranchesRequest{}); return err },
		"GetBranch":   func() error { _, err := c.GetBranch(ctx, &managementv1.GetBranchRequest{Id: "4"}); return err },
		"GetObject": func() error {
			_, err := c.GetObject(ctx, &managementv1.GetObjectRequest{Branch: "4", Id: "10"})
			return err
		},
		"CreateObjects": func() error {
			_, err := c.CreateObjects(ctx, &managementv1.CreateObjectsRequest{Branch: "4",
				Objects: []*managementv1.CmsObject{{Meta: &managementv1.CmsObjectMetadata{TypeRef: proto.Int32(0)}}}})
			return err
		},
		"GetUserDisplayName": func() error {
			_, err := c.GetUserDisplayName(ctx, &managementv1.GetUserDisplayNameRequest{Name: "admin"})
			return err
		},
	}
	for name, call := range calls {
		if err := call(); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without a principal: %v, want Unauthenticated", name, err)
		}
	}
}

// authSystem runs the system on store with data in dir and the given
// administrator password; stop shuts it down (also at cleanup).
func authSystem(t *testing.T, store app.Component, dir, adminPW string) (base string, stop func()) {
	t.Helper()
	cfg := app.DefaultConfig()
	if store.Engine != "" {
		cfg.Store = store
	}
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = adminPW
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("server did not shut down within 20s")
		}
	}
	t.Cleanup(stop)
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	}
	return "http://" + srv.HTTPAddr() + management.BasePath, stop
}

// authUser sends requests as one user ("" = no credentials).
type authUser struct {
	base, name, password string
}

type authReply struct {
	status int
	header http.Header
	body   string
}

func (u authUser) call(t *testing.T, want int, method, path, body string, hdr ...string) authReply {
	t.Helper()
	req, err := http.NewRequest(method, u.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if u.name != "" {
		req.SetBasicAuth(u.name, u.password)
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
	r := authReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if r.status != want {
		t.Fatalf("%s %s as %q = %d, want %d: %s", method, path, u.name, r.status, want, b)
	}
	if want >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%s %s: error without ProblemDetails: %s", method, path, b)
	}
	return r
}

func (r authReply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

// created returns the first created object id of a Cms_CreateObjects reply.
func (r authReply) created(t *testing.T) int {
	t.Helper()
	ids, _ := r.json(t)["createdObjectIds"].([]any)
	if len(ids) == 0 {
		t.Fatalf("no createdObjectIds in %s", r.body)
	}
	return int(ids[0].(float64))
}

func (r authReply) txUser(t *testing.T) any {
	t.Helper()
	tx, _ := r.json(t)["transaction"].(map[string]any)
	return tx["user"]
}

// userJSON is a Cms_CreateObjects body for one user; extra are more values.
func userJSON(name, password string, extra ...string) string {
	vals := []string{
		fmt.Sprintf(`{"attribute":1100,"language":0,"variant":0,"value":%q}`, name),
		fmt.Sprintf(`{"attribute":1000,"language":201,"variant":0,"value":%q}`, name),
		fmt.Sprintf(`{"attribute":1101,"language":0,"variant":0,"value":%q}`, password),
	}
	return `{"comment":"user","objects":[{"meta":{"typeRef":110},"values":[` + strings.Join(append(vals, extra...), ",") + `]}]}`
}

func grant(attr, branch int, sort int) string {
	return fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"sortReverse":%d,"value":%d}`, attr, sort, branch)
}

func runAuth(t *testing.T, store app.Component) {
	dir := t.TempDir()
	base, stop := authSystem(t, store, dir, "first-password")
	admin := authUser{base, "admin", "first-password"}

	// The model: branches A and B, a type on 4 and one object of it.
	branchID := func(name string) int {
		r := admin.call(t, 200, "POST", "/branches", fmt.Sprintf(`{"values":[{"attribute":1000,"language":201,"variant":0,"value":%q}]}`, name))
		meta, _ := r.json(t)["meta"].(map[string]any)
		return int(meta["id"].(float64))
	}
	a, b := branchID("A"), branchID("B")
	pa, pb := fmt.Sprintf("/branches/%d", a), fmt.Sprintf("/branches/%d", b)
	thing := admin.call(t, 201, "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"thing"}}]}`).created(t)
	newThing := fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d}}]}`, thing)
	obj := admin.call(t, 201, "POST", "/branches/4/objects", newThing).created(t)

	// Users through the normal object API: editor reads A, writer writes A,
	// robot writes A with internal access.
	editorID := admin.call(t, 201, "POST", "/branches/4/objects", userJSON("editor", "editor-pw", grant(1104, a, 0))).created(t)
	admin.call(t, 201, "POST", "/branches/4/objects", userJSON("writer", "writer-pw", grant(1105, a, 0)))
	admin.call(t, 201, "POST", "/branches/4/objects", userJSON("robot", "robot-pw", grant(1105, a, 0),
		`{"attribute":1103,"language":0,"variant":0,"value":true}`))
	editor := authUser{base, "editor", "editor-pw"}
	writer := authUser{base, "writer", "writer-pw"}
	robot := authUser{base, "robot", "robot-pw"}

	t.Run("read grant", func(t *testing.T) {
		editor.call(t, 200, "GET", fmt.Sprintf("%s/objects/%d?inherited=true", pa, obj), "")
		editor.call(t, 200, "GET", fmt.Sprintf("%s/objects?ids=%d", pa, obj), "")
		editor.call(t, 200, "GET", pa+"/types/thing/objects?take=10", "")
		editor.call(t, 200, "GET", pa, "")
		editor.call(t, 200, "GET", "/users/writer", "")
		// Writes on A, anything on B or on the default branch: 403.
		editor.call(t, 403, "POST", pa+"/objects", newThing)
		editor.call(t, 403, "PATCH", pa+"/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d}}]}`, obj))
		editor.call(t, 403, "DELETE", pa+"/objects", fmt.Sprintf(`{"objectIds":["%d"]}`, obj))
		editor.call(t, 403, "PATCH", pa, `{"values":[{"attribute":1000,"language":201,"variant":0,"value":"A2"}]}`)
		editor.call(t, 403, "DELETE", pa, `{}`)
		editor.call(t, 403, "POST", "/branches", fmt.Sprintf(`{"values":[{"attribute":4000,"language":0,"variant":0,"value":%d}]}`, a))
		editor.call(t, 403, "GET", fmt.Sprintf("%s/objects/%d", pb, obj), "")
		editor.call(t, 403, "GET", pb+"/types/thing/objects", "")
		editor.call(t, 403, "GET", pb, "")
		editor.call(t, 403, "GET", fmt.Sprintf("/branches/4/objects/%d", obj), "")
		editor.call(t, 403, "POST", "/branches/4/objects", userJSON("mallory", "pw", `{"attribute":1102,"language":0,"variant":0,"value":true}`))
		// The branch list holds the readable branches only.
		list := editor.call(t, 200, "GET", "/branches?take=100", "").json(t)
		objs, _ := list["objects"].([]any)
		if len(objs) != 1 || objs[0].(map[string]any)["meta"].(map[string]any)["id"].(float64) != float64(a) {
			t.Fatalf("editor's branch list = %v", list)
		}
	})

	t.Run("write grant", func(t *testing.T) {
		r := writer.call(t, 201, "POST", pa+"/objects", newThing)
		if u := r.txUser(t); u != "writer" {
			t.Fatalf("transaction user %v, want writer", u)
		}
		writer.call(t, 200, "GET", fmt.Sprintf("%s/objects/%d", pa, r.created(t)), "") // write implies read
		writer.call(t, 403, "POST", pb+"/objects", newThing)
		// Creating a branch below A is a write on A; deleting it too.
		child := writer.call(t, 200, "POST", "/branches", fmt.Sprintf(`{"values":[{"attribute":4000,"language":0,"variant":0,"value":%d}]}`, a)).json(t)
		cid := int(child["meta"].(map[string]any)["id"].(float64))
		writer.call(t, 201, "POST", fmt.Sprintf("/branches/%d/objects", cid), newThing) // grants cover descendants
		writer.call(t, 200, "DELETE", fmt.Sprintf("/branches/%d", cid), `{}`)
	})

	t.Run("comments", func(t *testing.T) { authComments(t, admin, editor, writer, a, b, obj) })

	t.Run("credentials", func(t *testing.T) {
		for _, u := range []authUser{{base, "editor", "wrong"}, {base, "nobody", "editor-pw"}, {base, "", ""}} {
			r := u.call(t, 401, "GET", pa, "")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
				t.Fatalf("401 without WWW-Authenticate: %v", r.header)
			}
		}
	})

	t.Run("password never returned", func(t *testing.T) {
		bodies := []string{
			admin.call(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d?inherited=true", editorID), "").body,
			admin.call(t, 200, "GET", fmt.Sprintf("/branches/4/objects/%d?inherited=true&attributes=1101", editorID), "").body,
			admin.call(t, 200, "GET", fmt.Sprintf("/branches/4/objects?ids=%d&inherited=true", editorID), "").body,
			admin.call(t, 200, "GET", "/branches/4/types/typeUser/objects?inherited=true&take=100", "").body,
			admin.call(t, 200, "GET", "/users/editor", "").body,
		}
		for _, body := range bodies {
			if strings.Contains(body, "$2a$") || strings.Contains(body, "editor-pw") || strings.Contains(body, `"attribute":1101`) {
				t.Fatalf("a response carries the password: %s", body)
			}
		}
		if !strings.Contains(bodies[0], `"value":"editor"`) {
			t.Fatalf("the user object lost its other values: %s", bodies[0])
		}
	})

	t.Run("X-CmsApi-Username", func(t *testing.T) {
		writer.call(t, 403, "POST", pa+"/objects", newThing, "X-CmsApi-Username", "ghost")
		r := robot.call(t, 201, "POST", pa+"/objects", newThing, "X-CmsApi-Username", "ghost")
		if u := r.txUser(t); u != "ghost" {
			t.Fatalf("transaction user %v, want ghost", u)
		}
		// The caller's own rights apply, not the named user's.
		robot.call(t, 403, "POST", pb+"/objects", newThing, "X-CmsApi-Username", "admin")
	})

	t.Run("changes take effect at once", func(t *testing.T) {
		editor.call(t, 403, "POST", pa+"/objects", newThing) // cached as a reader
		admin.call(t, 200, "PATCH", "/branches/4/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[%s]}]}`,
			editorID, grant(1105, a, 0)))
		editor.call(t, 201, "POST", pa+"/objects", newThing)
		admin.call(t, 200, "PATCH", "/branches/4/objects", fmt.Sprintf(
			`{"objects":[{"meta":{"id":%d},"values":[{"attribute":1101,"language":0,"variant":0,"value":"new-pw"}]}]}`, editorID))
		editor.call(t, 401, "GET", pa, "")
		authUser{base, "editor", "new-pw"}.call(t, 200, "GET", pa, "")
	})

	// Restarts: the configured administrator stays one user object; the
	// same password writes nothing, a new one replaces the old.
	adminUsers := func(base, pw string) int {
		list := authUser{base, "admin", pw}.call(t, 200, "GET", "/branches/4/types/typeUser/objects?inherited=true&take=1000", "").json(t)
		n := 0
		for _, o := range list["objects"].([]any) {
			for _, v := range o.(map[string]any)["values"].([]any) {
				if vm := v.(map[string]any); vm["attribute"].(float64) == 1100 && strings.EqualFold(fmt.Sprint(vm["value"]), "admin") {
					n++
				}
			}
		}
		return n
	}
	lastTx := func(base, pw string) float64 {
		o := authUser{base, "admin", pw}.call(t, 200, "GET", "/users/admin", "").json(t)
		return o["meta"].(map[string]any)["lastTransaction"].(float64)
	}
	before := lastTx(base, "first-password")
	stop()
	base, stop = authSystem(t, store, dir, "first-password")
	if n := adminUsers(base, "first-password"); n != 1 {
		t.Fatalf("%d admin users after a restart", n)
	}
	if after := lastTx(base, "first-password"); after != before {
		t.Fatalf("a restart with the same password rewrote the admin (lastTransaction %v → %v)", before, after)
	}
	stop()
	base, _ = authSystem(t, store, dir, "second-password")
	authUser{base, "admin", "first-password"}.call(t, 401, "GET", "/branches", "")
	if n := adminUsers(base, "second-password"); n != 1 {
		t.Fatalf("%d admin users after a password change", n)
	}
	if after := lastTx(base, "second-password"); after <= before {
		t.Fatalf("a new password was not written (lastTransaction %v → %v)", before, after)
	}
	authUser{base, "editor", "new-pw"}.call(t, 200, "GET", pa, "") // other users survive restarts
}
