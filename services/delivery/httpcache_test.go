package delivery

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/responsecache"
)

// users is a test Authenticator: password "pw" for every listed user.
type users map[string]auth.Principal

func (u users) Authenticate(_ context.Context, name, password string) (auth.Principal, error) {
	p, ok := u[name]
	if !ok || password != "pw" {
		return auth.Principal{}, auth.ErrBadCredentials
	}
	return p, nil
}

var testUsers = users{
	"admin":  {Name: "admin", Admin: true},
	"reader": {Name: "reader", Read: []int64{4}},
	"nobody": {Name: "nobody"},
}

func basicAuth(user string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, "pw")
	return r.Header.Get("Authorization")
}

// TestHTTPCache: the HTTP fast path serves a cached answer only to callers
// the normal path would serve, and the change events evict it too.
func TestHTTPCache(t *testing.T) {
	h := newHarnessWith(t, testUsers)
	ctx := context.Background()
	path := "/branches/4/objects/home?resolve=moduleRefs&lang=en-US"
	u, _ := url.Parse(h.url + path)
	key := responsecache.HTTPKey(&http.Request{URL: u, Header: http.Header{"Accept": {"application/json"}}})
	h.get(t, 401, path)
	first := h.get(t, 200, path, "Authorization", basicAuth("reader"))
	if _, ok, _ := h.cache.Get(ctx, key); !ok {
		t.Fatal("the answer was not kept by the HTTP cache")
	}
	// Hits: same body and ETag, 304 on If-None-Match, refused callers still refused.
	again := h.get(t, 200, "/branches/4/objects/home?lang=en-US&resolve=moduleRefs", "Authorization", basicAuth("reader"))
	if string(again.body) != string(first.body) || again.header.Get("ETag") != first.header.Get("ETag") ||
		again.header.Get("Cache-Control") != responsecache.CacheControl || again.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Fatalf("hit differs:\n%s %v\n%s %v", again.body, again.header, first.body, first.header)
	}
	h.get(t, 304, path, "Authorization", basicAuth("reader"), "If-None-Match", first.header.Get("ETag"))
	h.get(t, 401, path)
	h.get(t, 401, path, "Authorization", basicAuth("nosuchuser"))
	h.get(t, 403, path, "Authorization", basicAuth("nobody"))

	h.rename(t, h.site.M1, "Teaser v2")
	h.publish(t)
	if _, ok, _ := h.cache.Get(ctx, key); ok {
		t.Fatal("the change event left the HTTP answer cached")
	}
	changed := h.get(t, 200, path, "Authorization", basicAuth("admin"))
	if changed.header.Get("ETag") == first.header.Get("ETag") || string(changed.body) == string(first.body) {
		t.Fatalf("after the change: %s", changed.body)
	}
}
