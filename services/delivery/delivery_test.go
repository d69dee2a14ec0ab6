package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/tagcache"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gatewaytest"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// harness serves the Delivery group over in-process gRPC and the gateway
// mux, reading an index built by the real pipeline (deliverytest.Site).
type harness struct {
	site   *deliverytest.Site
	client deliveryv1.DeliveryServiceClient
	url    string
	cache  *memory.Cache
	inv    *tagcache.Invalidator
	group  *Group
	authz  *interceptors.Authz
}

func (h *harness) api() *service { return h.group.api }

// publish applies the pending changes to the index and hands each event
// to the cache invalidator, as the event stream does in production.
func (h *harness) publish(t *testing.T) {
	t.Helper()
	h.site.PublishThen(t, func(payload []byte) {
		if err := h.inv.Handle(context.Background(), events.Msg{Data: payload}); err != nil {
			t.Fatalf("invalidate: %v", err)
		}
	})
}

func newHarness(t testing.TB) *harness { t.Helper(); return newHarnessWith(t, nil) }

// newHarnessWith serves the group like the app does when authn is set:
// the auth interceptor on gRPC and the HTTP cache in front of the gateway.
func newHarnessWith(t testing.TB, authn auth.Authenticator) *harness {
	t.Helper()
	return newHarnessOpts(t, authn, true)
}

func newHarnessOpts(t testing.TB, authn auth.Authenticator, httpCache bool) *harness {
	t.Helper()
	return newHarnessOn(t, deliverytest.NewSite(t), authn, httpCache)
}

// newHarnessOn is newHarnessOpts over a given site (another engine, a
// bigger data set).
func newHarnessOn(t testing.TB, site *deliverytest.Site, authn auth.Authenticator, httpCache bool, with ...func(*Options)) *harness {
	t.Helper()
	c := memory.New(memory.Options{})
	t.Cleanup(func() { _ = c.Close() })
	opts := Options{Search: site.Engine, Cache: c, Layout: site.Options.Layout}
	for _, f := range with {
		f(&opts)
	}
	g := New(opts)
	// Without authn every call is an administrator's, as in the app with
	// credentials; the authorization interceptor runs either way.
	authenticate := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(auth.WithPrincipal(ctx, auth.Principal{Name: "admin", Admin: true}), req)
	}
	if authn != nil {
		authenticate = interceptors.Auth{Authenticator: authn}.Unary
	}
	az := &interceptors.Authz{Resolvers: g.BranchResolvers()}
	var middleware []func(http.Handler) http.Handler
	if authn != nil && httpCache {
		middleware = append(middleware, g.HTTPCache(authn))
	}
	conn, url := gatewaytest.Serve(t, g, []grpc.UnaryServerInterceptor{authenticate, az.Unary}, middleware...)
	return &harness{site: site, client: deliveryv1.NewDeliveryServiceClient(conn), url: url + BasePath,
		cache: c, inv: g.Invalidator(nil, "test"), group: g, authz: az}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) get(t *testing.T, want int, path string, hdr ...string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.url+path, nil)
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s = %d, want %d: %s", path, resp.StatusCode, want, b)
	}
	if want >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("GET %s: error without ProblemDetails: %s", path, b)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return v
}

func mock(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/mocks/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b).(map[string]any)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	}
	return "object"
}

// objectShapes collects, over the mock's objects, the JSON type of every
// key of an object and of its meta.
func objectShapes(objs ...any) (obj, meta map[string]string) {
	obj, meta = map[string]string{}, map[string]string{}
	for _, o := range objs {
		for k, v := range o.(map[string]any) {
			obj[k] = jsonType(v)
		}
		for k, v := range o.(map[string]any)["meta"].(map[string]any) {
			meta[k] = jsonType(v)
		}
	}
	return obj, meta
}

var (
	dotnetTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?Z$`)
	etag22     = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)
)

// sameShape checks our objects against the recorded ones: the same keys
// with the same JSON types (meta.apiIdentifier and displayIcon optional),
// .NET time stamps and 22-character etags.
func sameShape(t *testing.T, what string, ours []any, recorded []any) {
	t.Helper()
	wantObj, wantMeta := objectShapes(recorded...)
	wantMeta["apiIdentifier"] = "string" // written only when set
	for _, o := range ours {
		m := o.(map[string]any)
		for k := range wantObj {
			if _, ok := m[k]; !ok && k != "displayIcon" {
				t.Errorf("%s: object lacks %q: %v", what, k, m)
			}
		}
		for k, v := range m {
			if wantObj[k] != jsonType(v) {
				t.Errorf("%s: key %q is %s, recorded %q", what, k, jsonType(v), wantObj[k])
			}
		}
		meta := m["meta"].(map[string]any)
		for k, v := range meta {
			if wantMeta[k] != jsonType(v) {
				t.Errorf("%s: meta.%s is %s, recorded %q", what, k, jsonType(v), wantMeta[k])
			}
		}
		for k := range wantMeta {
			if _, ok := meta[k]; !ok && k != "apiIdentifier" {
				t.Errorf("%s: meta lacks %q", what, k)
			}
		}
		if s, _ := meta["lastModified"].(string); !dotnetTime.MatchString(s) {
			t.Errorf("%s: meta.lastModified %q", what, s)
		}
		if s, _ := meta["etag"].(string); !etag22.MatchString(s) {
			t.Errorf("%s: meta.etag %q", what, s)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestListShapeMatchesRecorded(t *testing.T) {
	h := newHarness(t)
	s := h.site
	r := h.get(t, 200, "/branches/4/types/webpage/objects?lang=en-US&resolve=moduleRefs,%20imageRef&take=10&props=0&deleted=false")
	got := decode(t, r.body).(map[string]any)
	rec := mock(t, "index.page.resolved.mock.json")
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(rec)) {
		t.Fatalf("root keys %v, recorded %v", keys(got), keys(rec))
	}
	if got["skip"] != 0.0 || got["count"] != 3.0 || got["more"] != false {
		t.Fatalf("paging = %v %v %v", got["skip"], got["count"], got["more"])
	}
	recObjs := append(rec["objs"].([]any), rec["refs"].([]any)...)
	sameShape(t, "objs", got["objs"].([]any), recObjs)
	sameShape(t, "refs", got["refs"].([]any), recObjs)
	home := got["objs"].([]any)[0].(map[string]any)
	props := home["props"].(map[string]any)
	if fmt.Sprint(props["moduleRefs"]) != fmt.Sprint([]any{float64(s.M1), float64(s.M2)}) ||
		props["htmlContent"].(map[string]any)["XML"] == nil || props["price"] != 19.5 || home["displayName"] != "Home" {
		t.Fatalf("home = %s", mustJSON(home))
	}
	var refIDs []float64
	for _, o := range got["refs"].([]any) {
		refIDs = append(refIDs, o.(map[string]any)["meta"].(map[string]any)["id"].(float64))
	}
	if fmt.Sprint(refIDs) != fmt.Sprint([]float64{float64(s.M1), float64(s.M2), float64(s.Img)}) {
		t.Fatalf("refs = %v", refIDs)
	}
	// A filter as consumers send it, and a sort.
	r = h.get(t, 200, `/branches/4/types/webPage/objects?filter=displayName:"home"&take=5&sort=displayName`)
	if objs := decode(t, r.body).(map[string]any)["objs"].([]any); len(objs) != 1 {
		t.Fatalf("filtered objs = %d", len(objs))
	}
	r = h.get(t, 200, "/branches/4/types/webPage/count?filter=price%3C100")
	if string(r.body) != `{"count":2}` {
		t.Fatalf("count body %s", r.body)
	}
	r = h.get(t, 200, "/branches/4/count?filter=meta.type=module")
	if string(r.body) != `{"count":2}` {
		t.Fatalf("untyped count body %s", r.body)
	}
	// || joins alternatives in counts and lists (&& binds tighter), not
	// in occurrences and suggestions.
	r = h.get(t, 200, "/branches/4/count?filter=meta.type=module%7C%7Cmeta.type=webPage%26%26price%3C100")
	if string(r.body) != `{"count":4}` {
		t.Fatalf("OR count body %s", r.body)
	}
	h.get(t, 400, "/branches/4/occurrences?fields=displayName&filter=meta.type=module%7C%7Cmeta.type=webPage")
}

func TestSingleShapeAndETag(t *testing.T) {
	h := newHarness(t)
	r := h.get(t, 200, "/branches/4/objects/home")
	got := decode(t, r.body).(map[string]any)
	rec := mock(t, "onepager.mock.json")
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(rec)) {
		t.Fatalf("root keys %v, recorded %v (refs absent when nothing was resolved)", keys(got), keys(rec))
	}
	sameShape(t, "obj", []any{got["obj"]}, []any{rec["obj"]})
	tag := r.header.Get("ETag")
	if !regexp.MustCompile(`^"[A-Za-z0-9_-]{22}"$`).MatchString(tag) {
		t.Fatalf("ETag %q", tag)
	}
	h.get(t, 304, "/branches/4/objects/home", "If-None-Match", tag)
	h.get(t, 200, "/branches/4/objects/home?lang=de-DE", "If-None-Match", tag)
	// Cached rendering: the same body again.
	if again := h.get(t, 200, "/branches/4/objects/home"); string(again.body) != string(r.body) {
		t.Fatalf("second response differs:\n%s\n%s", again.body, r.body)
	}
	// A published change makes the old tag stale.
	b, _ := json.Marshal("Changed")
	if _, err := h.site.Content.UpdateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ObjectInput{{ID: h.site.Home, Values: []content.ValueInput{{Attribute: h.site.NavTitle, Language: 201, JSON: b}}}}); err != nil {
		t.Fatal(err)
	}
	h.publish(t)
	r2 := h.get(t, 200, "/branches/4/objects/home", "If-None-Match", tag)
	if r2.header.Get("ETag") == tag || !strings.Contains(string(r2.body), `"navigationTitle":"Changed"`) {
		t.Fatalf("after a change: ETag %s, body %s", r2.header.Get("ETag"), r2.body)
	}
	// Typed get with resolve, as single.product.mock.json.
	r = h.get(t, 200, "/branches/4/types/webPage/objects/home?resolve=moduleRefs")
	got = decode(t, r.body).(map[string]any)
	rec = mock(t, "single.product.mock.json")
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(rec)) || len(got["refs"].([]any)) != 2 {
		t.Fatalf("typed single: keys %v, body %s", keys(got), r.body)
	}
	sameShape(t, "typed", append([]any{got["obj"]}, got["refs"].([]any)...), append([]any{rec["obj"]}, rec["refs"].([]any)...))
}

func TestErrorsAndConfig(t *testing.T) {
	h := newHarness(t)
	h.get(t, 404, "/branches/4/objects/nope")
	h.get(t, 404, "/branches/999/objects/home")
	h.get(t, 404, "/branches/4/types/noSuchType/objects?take=1")
	h.get(t, 400, "/branches/4/types/webPage/objects?take=1001")
	h.get(t, 400, "/branches/4/types/webPage/objects?filter=price%3E%3E1")
	h.get(t, 200, "/branches/4/types/webPage/objects?sort=price")
	h.get(t, 400, "/branches/4/types/webPage/objects?sort=noSuchAttribute")
	h.get(t, 400, "/branches/4/types/webPage/objects?sort=price%20sideways")
	// Without a blob component there are no files: the binary operations
	// answer 501 (services/internal/app/files_test.go reads them).
	h.get(t, 501, "/binaries/1")
	h.get(t, 501, "/branches/4/thumbnails/home")
	h.get(t, 200, "/branches/4/objects/home?resolveReverse=moduleRefs")
	h.get(t, 200, "/branches/4/objects/home?resolveUnits=true")
	h.get(t, 200, "/branches/4/objects/home?resolveUnits=false&resolveReverseDepth=100")

	langs := decode(t, h.get(t, 200, "/branches/4/config/languages").body).([]any)
	if len(langs) != 2 {
		t.Fatalf("languages = %v", langs)
	}
	types := decode(t, h.get(t, 200, "/branches/4/config/types").body).([]any)
	if len(types) < 40 {
		t.Fatalf("%d types", len(types))
	}
	branches := decode(t, h.get(t, 200, "/branches").body).([]any)
	if len(branches) != 1 || branches[0].(map[string]any)["meta"].(map[string]any)["type"] != "typeBranch" {
		t.Fatalf("branches = %v", branches)
	}
	ui := decode(t, h.get(t, 200, "/branches/4/updateInfo").body).(map[string]any)
	if ui["lastTransaction"].(float64) < 1 || !dotnetTime.MatchString(ui["lastModified"].(string)) {
		t.Fatalf("updateInfo = %v", ui)
	}
	occ := decode(t, h.get(t, 200, "/branches/4/types/webPage/occurrences?fields=moduleRefs&take=10").body).(map[string]any)
	want := fmt.Sprintf(`{"occurrences":{"moduleRefs":{"more":false,"notNullOccurrences":2,"nullOccurrences":1,`+
		`"valueOccurrences":[{"count":1,"value":%d},{"count":2,"value":%d}],"valueType":"number"}}}`, h.site.M1, h.site.M2)
	if mustJSON(occ) != want {
		t.Fatalf("occurrences = %s\nwant %s", mustJSON(occ), want)
	}
	sug := decode(t, h.get(t, 200, "/branches/4/suggestions?pattern=ho&fields=displayName").body)
	if mustJSON(sug) != `{"suggestions":[{"count":1,"length":2,"value":"home"}]}` {
		t.Fatalf("suggestions = %s", mustJSON(sug))
	}
	h.get(t, 200, "/branches/4/suggestions?pattern=ho&fields=displayName&fuzzy=true")
	h.get(t, 400, "/branches/4/occurrences?fields=")

	// gRPC answers with the codes behind the HTTP statuses.
	_, err := h.client.Get(context.Background(), &deliveryv1.GetRequest{Branch: "4", Id: "nope"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("gRPC get unknown: %v", err)
	}
	res, err := h.client.CountTyped(context.Background(), &deliveryv1.CountTypedRequest{Branch: "4", Type: "module"})
	if err != nil || res.Count != 2 {
		t.Fatalf("gRPC count typed = %v, %v", res, err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCacheServesRenderedResponses: a response is cached under its ETag
// (index version + request). Removing a document behind the version's back
// proves the second answer came from the cache; another request misses.
func TestCacheServesRenderedResponses(t *testing.T) {
	h := newHarness(t)
	first := h.get(t, 200, "/branches/4/objects/home")
	ctx := context.Background()
	idx := h.site.Options.IndexPrefix + indexdoc.ObjectsIndex
	if _, err := h.site.Engine.Bulk(ctx, idx, []search.Op{search.Delete(indexdoc.DocID(4, h.site.Home), 1<<40)}); err != nil {
		t.Fatal(err)
	}
	if err := h.site.Engine.Refresh(ctx, idx); err != nil {
		t.Fatal(err)
	}
	if again := h.get(t, 200, "/branches/4/objects/home"); string(again.body) != string(first.body) {
		t.Fatalf("cached body differs: %s", again.body)
	}
	h.get(t, 404, "/branches/4/objects/home?lang=en-US")
}
