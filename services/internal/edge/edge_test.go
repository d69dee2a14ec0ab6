package edge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

func serve(h http.Handler, r *http.Request) (*httptest.ResponseRecorder, gateway.Problem) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var p gateway.Problem
	_ = json.Unmarshal(w.Body.Bytes(), &p)
	return w, p
}

// TestServerErrorsAreLoggedWithTheRequestID: a 5xx from the gateway's
// error handler and a panic both leave an ERROR line carrying the request
// id the ProblemDetails shows, with the cause the client never sees.
func TestServerErrorsAreLoggedWithTheRequestID(t *testing.T) {
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		gateway.ErrorHandler(r.Context(), nil, gateway.WireJSON{}, w, r, errors.New("disk on fire"))
	})
	h := Handler(Config{Log: log}, failing)
	for _, path := range []string{"/fail", "/panic"} {
		w, p := serve(h, httptest.NewRequest(http.MethodGet, path, nil))
		id := w.Header().Get(gateway.HeaderRequestID)
		if w.Code != 500 || id == "" || p.RequestID != id || strings.Contains(w.Body.String(), "disk") {
			t.Fatalf("%s: %d %s (id %q)", path, w.Code, w.Body, id)
		}
		var line string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "request_id="+id) && strings.Contains(l, "level=ERROR") && strings.Contains(l, "status=500") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("%s: no ERROR line with request_id=%s:\n%s", path, id, logs)
		}
		if want := map[string]string{"/fail": "disk on fire", "/panic": "boom"}[path]; !strings.Contains(line, want) {
			t.Errorf("%s: the log line lacks the cause %q: %s", path, want, line)
		}
	}
	// Client errors and 501 are not server faults.
	before := strings.Count(logs.String(), "level=ERROR")
	for _, code := range []int{404, 501} {
		h := Handler(Config{Log: log}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		serve(h, httptest.NewRequest(http.MethodGet, "/x", nil))
	}
	if after := strings.Count(logs.String(), "level=ERROR"); after != before {
		t.Errorf("a 404 or 501 was logged as an error:\n%s", logs)
	}
}

func TestRequestIDSanity(t *testing.T) {
	for id, sane := range map[string]bool{
		"abc-123": true, "trace:1/2+3=.x_y": true, strings.Repeat("a", 128): true,
		"": false, strings.Repeat("a", 129): false, "a b": false, "ü": false, "a\nb": false, `a"b`: false,
	} {
		if got := saneRequestID(id); got != sane {
			t.Errorf("saneRequestID(%q) = %v, want %v", id, got, sane)
		}
	}
}

type fakeAuthn struct{ err error }

func (f fakeAuthn) Authenticate(ctx context.Context, user, _ string) (auth.Principal, error) {
	if f.err != nil {
		return auth.Principal{}, f.err
	}
	if auth.ClientAddr(ctx) != "192.0.2.9" {
		return auth.Principal{}, errors.New("the client address did not reach the authenticator")
	}
	return auth.Principal{Name: user}, nil
}

// TestAuthenticateMapsTheGuard: throttled logins are 429 and saturated
// password checks 503, both with Retry-After; success passes the
// principal on.
func TestAuthenticateMapsTheGuard(t *testing.T) {
	var seen string
	next := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		seen = p.Name
	})
	for _, c := range []struct {
		err        error
		want       int
		retryAfter string
	}{
		{nil, 200, ""},
		{&auth.RetryError{Err: auth.ErrThrottled, After: 1500 * time.Millisecond}, 429, "2"},
		{&auth.RetryError{Err: auth.ErrBusy, After: time.Second}, 503, "1"},
		{auth.ErrBadCredentials, 401, ""},
		{errors.New("store down"), 500, ""},
	} {
		h := Authenticate(fakeAuthn{c.err}, []string{"/apis/cms/v1"}, nil, nil, nil, next)
		r := httptest.NewRequest(http.MethodGet, "/apis/cms/v1/branches", nil)
		r.RemoteAddr = "192.0.2.9:4711"
		r.SetBasicAuth("ed", "pw")
		w, p := serve(h, r)
		if w.Code != c.want || w.Header().Get("Retry-After") != c.retryAfter || (c.want != 200 && p.Status != c.want) {
			t.Errorf("%v: %d Retry-After %q %s, want %d %q", c.err, w.Code, w.Header().Get("Retry-After"), w.Body, c.want, c.retryAfter)
		}
		if c.want == 200 && seen != "ed" {
			t.Errorf("the principal did not reach the handler: %q", seen)
		}
	}
}

// TestUploadDeadlineReachesTheConnection: RaiseBodyLimit extends the read
// deadline through the edge's response writer wrapper.
func TestUploadDeadlineReachesTheConnection(t *testing.T) {
	var raised bool
	var deadlineErr error
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raised = gateway.RaiseBodyLimit(w, r, 1<<20)
		deadlineErr = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Minute))
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(Handler(Config{Log: slog.New(slog.DiscardHandler),
		Body: gateway.BodyLimits{MaxBytes: 10, UploadReadTimeout: time.Minute}}, inner))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/upload", "multipart/form-data; boundary=x", strings.NewReader(strings.Repeat("x", 100)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !raised || deadlineErr != nil || resp.StatusCode != 204 {
		t.Fatalf("raised %v, deadline %v, status %d", raised, deadlineErr, resp.StatusCode)
	}
}
