package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// declared is one RPC with its HTTP route and declared access.
type declared struct {
	route
	md     protoreflect.MethodDescriptor
	access *optionsv1.Access
	rule   *annotations.HttpRule
}

// declaredRPCs lists every RPC of the cms.* services.

// operationCount is how many RPCs the four services declare: NovaDB's 75
// and ours (Webhook_GetWebhookDeliveries, Webhook_SendTestDelivery,
// Delivery_WatchChanges, Auth_IssueToken, Auth_RenewToken, Auth_Logout,
// Auth_GetAccount, Auth_ChangePassword, Cms_GetObjectHistory,
// Cms_RevertObject, Cms_RevertObjects, Cms_GetBranchDiff,
// Cms_PromoteBranch, Cms_RevertTransaction, Cms_ScheduleRelease). The
// tables that list every RPC (authorization, routes, the hostile
// catalogue) check it, so a new operation cannot be left out of one of
// them.
const operationCount = 90

func declaredRPCs() []declared {
	var out []declared
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "cms.") {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			ms := fd.Services().Get(i).Methods()
			for j := 0; j < ms.Len(); j++ {
				md := ms.Get(j)
				opts := md.Options().(*descriptorpb.MethodOptions)
				d := declared{md: md, access: interceptors.MethodAccess(md)}
				d.op = proto.GetExtension(opts, optionsv1.E_OperationId).(string)
				if mp := proto.GetExtension(opts, optionsv1.E_Multipart).(*optionsv1.MultipartRoute); mp != nil {
					d.method, d.path, d.multipart = mp.GetMethod(), mp.GetPath(), true
				} else {
					d.rule = proto.GetExtension(opts, annotations.E_Http).(*annotations.HttpRule)
					d.method, d.path = httpRule(d.rule)
				}
				out = append(out, d)
			}
		}
		return true
	})
	return out
}

// notLists are the RPCs answering a list that do not declare Access.list,
// with the reason.
var notLists = map[string]string{
	"Cms_GetObjects":       "objects addressed by ids: an unknown id is 404, not a shorter list",
	"Cms_GetObjectHistory": "the history of one object addressed by id: an unknown object is 404, an unreadable branch 403, as for Cms_GetObject",
	"Cms_GetBranchDiff":    "the diff of one branch against its parent: an unknown branch is 404, an unreadable one 403, as for Cms_GetObjectHistory",
	"Cms_PromoteBranch":    "a write answering what it promoted (its conflicts): without the write grant it is 403",
	"Cms_GetTypedObjects":  "Management's list of one branch keeps NovaDB's 404 for an unknown branch; to a user without the grant an unknown and an unreadable branch are both 403",
}

// isList reports whether d answers a list, a count or a tally of what lies
// on branches (objects, comments, jobs, branches, languages, types,
// suggestions), and so must declare Access.list. The parts of one resource
// addressed by id (a job's artifacts, a webhook's deliveries) are not.
func isList(d declared) bool {
	if d.access.GetOwner() != optionsv1.Owner_OWNER_UNSPECIFIED {
		return false
	}
	fields := d.md.Output().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		switch name := string(f.Name()); {
		case name == "count", strings.HasSuffix(name, "occurrences"):
			return true
		case f.IsList() && f.Kind() == protoreflect.MessageKind && !slices.Contains([]string{"refs", "values", "parameters", "extensions"}, name):
			return true
		}
	}
	return false
}

// TestEveryRPCDeclaresAccess: every RPC of the four groups states its
// permission, and a branch_field names a top-level field of the request.
// Every list declares list (a READ list on a string branch_field, which
// the interceptor can point at no branch), so no list is filtered by hand.
func TestEveryRPCDeclaresAccess(t *testing.T) {
	rpcs := declaredRPCs()
	if len(rpcs) != operationCount {
		t.Fatalf("%d RPCs, want %d", len(rpcs), operationCount)
	}
	for _, d := range rpcs {
		if d.access == nil {
			t.Errorf("%s declares no (cms.options.v1.access) permission", d.md.FullName())
			continue
		}
		if f := d.access.GetBranchField(); f != "" && d.md.Input().Fields().ByName(protoreflect.Name(f)) == nil {
			t.Errorf("%s: branch_field %q is no field of %s", d.md.FullName(), f, d.md.Input().FullName())
		}
		if f := d.access.GetOwnerField(); (f != "") != (d.access.GetOwner() != optionsv1.Owner_OWNER_UNSPECIFIED) ||
			f != "" && d.md.Input().Fields().ByName(protoreflect.Name(f)) == nil {
			t.Errorf("%s: owner %v with owner_field %q: both or neither, and a field of %s", d.md.FullName(), d.access.GetOwner(), f, d.md.Input().FullName())
		}
		perm := d.access.GetPermission()
		branchScoped := perm == optionsv1.Permission_PERMISSION_READ || perm == optionsv1.Permission_PERMISSION_WRITE
		names := 0
		for _, set := range []bool{d.access.GetBranchField() != "", d.access.GetNewBranchParent(), d.access.GetOwnerField() != "", d.access.GetDefaultBranch()} {
			if set {
				names++
			}
		}
		if branchScoped && names != 1 || !branchScoped && names != 0 {
			t.Errorf("%s: %v naming %d branches (%v): READ and WRITE need exactly one, others none", d.md.FullName(), perm, names, d.access)
		}
		if want := isList(d) && notLists[d.op] == ""; d.access.GetList() != want {
			t.Errorf("%s: list %v, want %v (every list, and only lists, declare it)", d.md.FullName(), d.access.GetList(), want)
		}
		if d.access.GetList() && perm == optionsv1.Permission_PERMISSION_READ {
			if f := d.md.Input().Fields().ByName(protoreflect.Name(d.access.GetBranchField())); f == nil || f.Kind() != protoreflect.StringKind {
				t.Errorf("%s: a READ list needs a string branch_field (the interceptor names no branch in it)", d.md.FullName())
			}
		}
		if d.access.GetList() && perm != optionsv1.Permission_PERMISSION_READ && perm != optionsv1.Permission_PERMISSION_AUTHENTICATED {
			t.Errorf("%s: list with %v: lists are READ (one branch) or AUTHENTICATED (filtered by the domain)", d.md.FullName(), perm)
		}
		// A write that starts, changes or deletes a job checks whether the
		// job acts on the whole installation (admins only); nothing else does.
		in := d.md.Input().Fields()
		jobWrite := perm == optionsv1.Permission_PERMISSION_WRITE &&
			(in.ByName("job_definition_id") != nil || d.access.GetOwner() == optionsv1.Owner_OWNER_JOB)
		if d.access.GetInstallationJobAdmin() != jobWrite {
			t.Errorf("%s: installation_job_admin %v, want %v (every job write, and only those)", d.md.FullName(), d.access.GetInstallationJobAdmin(), jobWrite)
		}
	}
}

// mustRequest is rpcRequest failing t on an error. With zero parts, path
// variables and, for a branch field outside the path, the query (GET,
// DELETE) or the JSON body name the default branch 4 where the declared
// branch goes, 1 elsewhere.
func mustRequest(t *testing.T, base string, d declared, parts rpcParts) *http.Request {
	t.Helper()
	req, err := rpcRequest(base, d, parts)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// rpcParts varies the request rpcRequest builds for an RPC; the zero value
// is the default request (mustRequest).
type rpcParts struct {
	branch      string            // the declared branch as sent ("" = 4); raw in a path
	vars        map[string]string // path variables by name, raw (already escaped)
	query       string            // more raw query, without "?"
	body        []byte            // replaces the body (with contentType, default application/json)
	noBranch    bool              // leave a branch field outside the path out
	emptyBody   bool              // no body at all
	contentType string            // replaces the Content-Type
}

// rpcBranchField is the declared branch field of d and whether the route
// carries it in its path.
func rpcBranchField(d declared) (name string, inPath bool) {
	if d.access == nil || d.access.GetBranchField() == "" {
		return "", false
	}
	name = d.access.GetBranchField()
	return name, strings.Contains(d.path, "{"+name+"}")
}

// rpcBody is the JSON body of d's request as a map (nil for routes without
// a JSON body): the declared branch when the body carries it.
func rpcBody(d declared, branch string) map[string]any {
	if d.multipart || d.rule.GetBody() == "" {
		return nil
	}
	body := map[string]any{}
	if name, inPath := rpcBranchField(d); name != "" && !inPath && d.rule.GetBody() == "*" {
		jsonName := d.md.Input().Fields().ByName(protoreflect.Name(name)).JSONName()
		if n, err := strconv.Atoi(branch); err == nil && strconv.Itoa(n) == branch {
			body[jsonName] = n
		} else {
			body[jsonName] = branch
		}
	}
	return body
}

// rpcRequest builds the HTTP request of d from its route (see
// mustRequest) with parts applied.
func rpcRequest(base string, d declared, parts rpcParts) (*http.Request, error) {
	branch := parts.branch
	if branch == "" {
		branch = "4"
	}
	branchVar, inPath := rpcBranchField(d)
	path := pathVar.ReplaceAllStringFunc(d.path, func(v string) string {
		name := strings.TrimSuffix(strings.Trim(v, "{}"), "=**")
		switch raw, ok := parts.vars[name]; {
		case ok:
			return raw
		case name == branchVar:
			return branch
		case strings.Contains(v, "=**"):
			return "reports/2024/summary.txt"
		case name == "file":
			return "2100001.css"
		case name == "name":
			return "picture.png"
		}
		return "1"
	})
	var query []string
	if branchVar != "" && !inPath && d.rule.GetBody() != "*" && !parts.noBranch {
		jsonName := d.md.Input().Fields().ByName(protoreflect.Name(branchVar)).JSONName()
		query = append(query, jsonName+"="+branch)
	}
	if parts.query != "" {
		query = append(query, parts.query)
	}
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	var rdr io.Reader
	contentType := ""
	switch {
	case parts.emptyBody:
	case parts.body != nil:
		rdr, contentType = bytes.NewReader(parts.body), "application/json"
	case d.multipart:
		rdr, contentType = sampleUpload()
	case d.rule.GetBody() != "":
		body := rpcBody(d, branch)
		if parts.noBranch {
			body = map[string]any{}
		}
		b, _ := json.Marshal(body)
		rdr, contentType = bytes.NewReader(b), "application/json"
	}
	if parts.contentType != "" {
		contentType = parts.contentType
	}
	req, err := http.NewRequest(d.method, base+path, rdr)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// sampleUpload is a multipart upload body (Extension and File) and its
// content type.
func sampleUpload() (io.Reader, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("Extension", ".txt")
	fw, _ := mw.CreateFormFile("File", "hello.txt")
	_, _ = fw.Write([]byte("hello"))
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func authzDo(t *testing.T, req *http.Request) (int, gateway.Problem, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var p gateway.Problem
	if resp.StatusCode >= 400 {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s %s: %d without ProblemDetails: %s", req.Method, req.URL.Path, resp.StatusCode, b)
		}
		_ = json.Unmarshal(b, &p)
	}
	return resp.StatusCode, p, string(b)
}

// TestAuthorizationTable calls every RPC through the gateway: without
// credentials it is 401; as a user without grants a READ, WRITE or ADMIN
// RPC is 403 (before the handler: also the ones answering 501 today),
// a READ list answers 200 exactly what an administrator gets for a branch
// that does not exist (no existence oracle), while an AUTHENTICATED one
// reaches its handler (neither 401 nor 403).
func TestAuthorizationTable(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	user := fmt.Sprintf(`{"comment":"user","objects":[{"meta":{"typeRef":110},"values":[
		{"attribute":1100,"language":0,"variant":0,"value":"nogrant"},
		{"attribute":1000,"language":201,"variant":0,"value":"No Grant"},
		{"attribute":1101,"language":0,"variant":0,"value":%q}]}]}`, "nogrant-pw")
	req, _ := http.NewRequest(http.MethodPost, base+"/apis/cms/v1/branches/4/objects", strings.NewReader(user))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", "test-password")
	code, _, body := authzDo(t, req)
	if code != http.StatusCreated {
		t.Fatalf("create user: %d %s", code, body)
	}
	// Delivery and the Index group know a branch from the index: wait until
	// it holds the user's transaction, so a slow indexer on a loaded machine
	// answers no "branch not found" where the table expects 403.
	var created struct {
		Transaction struct {
			ID int64 `json:"id"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.Transaction.ID == 0 {
		t.Fatalf("create user: no transaction id in %s (%v)", body, err)
	}
	admin := httpClient{t, base, "admin", "test-password"}
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
		"X-Cms-Min-Version", strconv.FormatInt(created.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	// RPCs addressing a job, comment or webhook by id are checked on its branch:
	// they get an existing one (an unknown id is 404 for everybody).
	owned := map[optionsv1.Owner]string{
		optionsv1.Owner_OWNER_JOB:     strconv.FormatInt(newJob(t, admin), 10),
		optionsv1.Owner_OWNER_COMMENT: strconv.FormatInt(newComment(t, admin), 10),
		optionsv1.Owner_OWNER_WEBHOOK: strconv.FormatInt(newWebhook(admin), 10),
	}
	rpcs := declaredRPCs()
	if len(rpcs) != operationCount {
		t.Fatalf("%d RPCs, want %d", len(rpcs), operationCount)
	}
	for _, d := range rpcs {
		t.Run(d.op, func(t *testing.T) {
			if d.access == nil {
				t.Fatal("no declared access")
			}
			var parts rpcParts
			if f := d.access.GetOwnerField(); f != "" {
				parts.vars = map[string]string{f: owned[d.access.GetOwner()]}
				unknown, _ := rpcRequest(base, d, rpcParts{vars: map[string]string{f: "999999"}})
				unknown.SetBasicAuth("nogrant", "nogrant-pw")
				if code, _, body := authzDo(t, unknown); code != http.StatusNotFound {
					t.Errorf("unknown %s: %d, want 404: %s", f, code, body)
				}
			}
			if code, _, body := authzDo(t, mustRequest(t, base, d, parts)); code != http.StatusUnauthorized {
				t.Errorf("without credentials: %d, want 401: %s", code, body)
			}
			req := mustRequest(t, base, d, parts)
			req.SetBasicAuth("nogrant", "nogrant-pw")
			code, p, body := authzDo(t, req)
			if perm := d.access.GetPermission(); perm == optionsv1.Permission_PERMISSION_AUTHENTICATED ||
				perm == optionsv1.Permission_PERMISSION_CREDENTIALS { // the token endpoint: any user logs in
				if code == http.StatusUnauthorized || code == http.StatusForbidden {
					t.Errorf("authenticated without grants: %d, want the handler's answer: %s", code, body)
				}
				return
			}
			if d.access.GetList() {
				// A list on a branch without the grant answers what a branch
				// that does not exist answers an administrator: nothing.
				unknown := mustRequest(t, base, d, rpcParts{branch: "999999999"})
				unknown.SetBasicAuth("admin", "test-password")
				ucode, _, ubody := authzDo(t, unknown)
				same := code == ucode && withoutVersions(t, []byte(body)) == withoutVersions(t, []byte(ubody))
				if code >= 400 { // the default request lacks a required parameter: the same refusal
					same = code == ucode && problemDetail(t, []byte(body)) == problemDetail(t, []byte(ubody))
				}
				if code == http.StatusForbidden || !same {
					t.Errorf("list without the grant: %d %s, want the administrator's answer for an unknown branch: %d %s", code, body, ucode, ubody)
				}
				return
			}
			if code != http.StatusForbidden || p.Status != http.StatusForbidden {
				t.Errorf("without the grant: %d, want 403: %s", code, body)
			}
		})
	}
}
