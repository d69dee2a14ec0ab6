package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func corsAnswer(cfg CORSConfig, method, origin string) http.Header {
	h := CORS(cfg, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	r := httptest.NewRequest(method, "/apis/cms/v1/branches", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if method == http.MethodOptions {
		r.Header.Set("Access-Control-Request-Method", "PATCH")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	w.Header().Set("X-Status", http.StatusText(w.Code))
	return w.Header()
}

func TestCORSPolicy(t *testing.T) {
	listed := CORSConfig{AllowedOrigins: []string{"https://app.example/", "null"}}
	star := CORSConfig{AllowedOrigins: []string{"*"}}
	both := CORSConfig{AllowedOrigins: []string{"*", "https://app.example"}}
	cases := []struct {
		name            string
		cfg             CORSConfig
		method, origin  string
		wantOrigin      string
		wantCredentials bool
		wantVary        bool
	}{
		{"default: no cross-origin access", CORSConfig{}, http.MethodGet, "https://app.example", "", false, false},
		{"default preflight", CORSConfig{}, http.MethodOptions, "https://app.example", "", false, false},
		{"listed origin gets credentials", listed, http.MethodGet, "https://app.example", "https://app.example", true, true},
		{"listed origin, other case", listed, http.MethodGet, "https://APP.example", "https://APP.example", true, true},
		{"unlisted origin", listed, http.MethodGet, "https://evil.example", "", false, true},
		{"null is never allowed when listed", listed, http.MethodGet, "null", "", false, true},
		{"star: any origin, no credentials", star, http.MethodGet, "https://evil.example", "*", false, false},
		{"star: null is still refused", star, http.MethodGet, "null", "", false, false},
		{"star preflight", star, http.MethodOptions, "https://evil.example", "*", false, false},
		{"star and list: listed gets credentials", both, http.MethodGet, "https://app.example", "https://app.example", true, true},
		{"star and list: others without", both, http.MethodGet, "https://other.example", "*", false, true},
		{"no Origin header", star, http.MethodGet, "", "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := corsAnswer(c.cfg, c.method, c.origin)
			if got := h.Get("Access-Control-Allow-Origin"); got != c.wantOrigin {
				t.Errorf("Allow-Origin = %q, want %q", got, c.wantOrigin)
			}
			if got := h.Get("Access-Control-Allow-Credentials") == "true"; got != c.wantCredentials {
				t.Errorf("Allow-Credentials = %v, want %v", got, c.wantCredentials)
			}
			if got := strings.Contains(h.Get("Vary"), "Origin"); got != c.wantVary {
				t.Errorf("Vary: Origin = %v, want %v", got, c.wantVary)
			}
			preflightAnswered := h.Get("X-Status") == http.StatusText(http.StatusNoContent)
			if want := c.method == http.MethodOptions && c.wantOrigin != ""; preflightAnswered != want {
				t.Errorf("preflight answered = %v (%s), want %v", preflightAnswered, h.Get("X-Status"), want)
			}
		})
	}
}

// TestCORSAdvertisesWhatTheGatewayForwards: every request header a
// preflight allows reaches the services (or is Authorization/Content-Type),
// the NovaDB headers are among them, and every exposed response header is
// one the gateway writes.
func TestCORSAdvertisesWhatTheGatewayForwards(t *testing.T) {
	h := corsAnswer(CORSConfig{AllowedOrigins: []string{"*"}}, http.MethodOptions, "https://app.example")
	allowed := strings.Split(h.Get("Access-Control-Allow-Headers"), ", ")
	for _, name := range allowed {
		if _, ok := IncomingHeaderMatcher(name); !ok && name != "Authorization" && name != "Content-Type" {
			t.Errorf("preflight allows %s, which the gateway does not forward", name)
		}
	}
	for _, want := range []string{"If-Match", "If-None-Match", "Range", "X-Cmsapi-Username", "X-Request-Id", "X-Cms-Min-Version"} {
		if !strings.Contains(h.Get("Access-Control-Allow-Headers"), want) {
			t.Errorf("preflight does not allow %s: %s", want, h.Get("Access-Control-Allow-Headers"))
		}
	}
	for _, name := range strings.Split(h.Get("Access-Control-Expose-Headers"), ", ") {
		if _, ok := OutgoingHeaderMatcher(name); !ok {
			t.Errorf("exposes %s, which the gateway never writes", name)
		}
	}
}
