package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// problem429 checks a per-user cap's answer: 429, Retry-After and a
// ProblemDetails naming the cap.
func problem429(t *testing.T, what string, code int, header http.Header, body []byte, limit string) {
	t.Helper()
	var p struct {
		Status int    `json:"status"`
		Reason string `json:"reason"`
		Limit  string `json:"limit"`
	}
	_ = json.Unmarshal(body, &p)
	if code != http.StatusTooManyRequests || header.Get("Retry-After") == "" || p.Status != 429 ||
		p.Reason != "TOO_MANY_REQUESTS" || p.Limit != limit || !strings.HasPrefix(header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%s = %d (Retry-After %q, %s): %s; want 429 naming %s", what, code, header.Get("Retry-After"),
			header.Get("Content-Type"), body, limit)
	}
}

// TestPerUserFairnessOverHTTP (Reliability II item 5), with the default
// caps: one reader's 24 connections of an endless-loop template get
// their 4 slots and 429s naming renderSlotsPerUser, and administrators'
// renders meanwhile succeed; a user without grants gets 429 naming
// files.maxOpenUploadsPerUser after its 100th open upload.
func TestPerUserFairnessOverHTTP(t *testing.T) {
	base := "http://" + startServer(t).HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	ids := admin.create(
		obj(150, "loop", v(1280, 0, "{{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}")),
		obj(150, "hello", v(1280, 0, "hello")),
		obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, 4)),
		obj(110, "", v(1100, 0, "nobody"), v(1000, 201, "Nobody"), v(1101, 0, "nobody-pw"))).CreatedObjectIDs
	reader := httpClient{t, base, "reader", "reader-pw"}
	renderTarget := func(id int64, i int) string {
		return fmt.Sprintf("/apis/rendering/v1/branches/4/templates/%d/render?parameters=%s", id, url.QueryEscape(fmt.Sprintf("i=%d", i)))
	}
	render := func(c httpClient, id int64, i int) httpResult { return c.do(http.MethodGet, renderTarget(id, i), "") }
	// The rendering group knows the branch once the index has it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := render(admin, ids[1], -1)
		if r.code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("render = %d: %s", r.code, r.body)
		}
	}
	results := make(chan httpResult, 24)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range 24 {
		wg.Go(func() { results <- render(reader, ids[0], i) })
	}
	// The reader's extra renders are refused at once; 4 keep running.
	doc := loadRenderingDoc(t)
	for range 20 {
		r := <-results
		problem429(t, "the reader's extra render", r.code, r.header, r.body, "renderSlotsPerUser")
		doc.check(t, http.MethodGet, renderTarget(ids[0], 0), "", r) // the served document declares it
	}
	for i := range 10 {
		if r := render(admin, ids[1], i); r.code != http.StatusOK || string(r.body) != "hello" {
			t.Fatalf("admin render %d while the reader saturates its slots = %d: %s", i, r.code, r.body)
		}
	}
	for range 4 {
		if r := <-results; r.code != http.StatusUnprocessableEntity {
			t.Errorf("the reader's endless loop = %d: %s, want 422 at its time limit", r.code, r.body)
		}
	}

	upload := func() (int, http.Header, []byte) {
		body, ct := multipartBody(t, "File", []byte("part"), "Extension", ".bin", "Commit", "false")
		req, _ := http.NewRequest(http.MethodPost, base+"/apis/cms/v1/fileUpload", body)
		req.Header.Set("Content-Type", ct)
		req.SetBasicAuth("nobody", "nobody-pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	for i := range 100 {
		if code, _, b := upload(); code != http.StatusOK {
			t.Fatalf("open upload %d = %d: %s", i+1, code, b)
		}
	}
	code, h, b := upload()
	problem429(t, "the 101st open upload", code, h, b, "files.maxOpenUploadsPerUser")
}

// TestLiveSubscribersPerUserOverHTTP (Reliability II item 5): a user
// holding live.maxSubscribersPerUser change streams gets 429 naming the
// cap for one more, while another user still subscribes.
func TestLiveSubscribersPerUserOverHTTP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.Live.MaxSubscribersPerUser = 2
	srv, _ := startLogged(t, cfg)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, 4)),
		obj(110, "", v(1100, 0, "other"), v(1000, 201, "Other"), v(1101, 0, "other-pw"), v(1104, 0, 4)))
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
		"X-Cms-Min-Version", fmt.Sprint(w.Transaction.ID), "X-Cms-Max-Wait", "30s")
	open := func(user, pass string) *http.Response {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/delivery/api/branches/4/changes", nil)
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for range 2 {
		if r := open("reader", "reader-pw"); r.StatusCode != http.StatusOK {
			t.Fatalf("reader's stream = %d", r.StatusCode)
		}
	}
	r := open("reader", "reader-pw")
	b, _ := io.ReadAll(r.Body)
	problem429(t, "reader's third stream", r.StatusCode, r.Header, b, "live.maxSubscribersPerUser")
	loadServedDoc(t, "Delivery").check(t, http.MethodGet, "/delivery/api/branches/4/changes", "",
		httpResult{code: r.StatusCode, header: r.Header, body: b})
	if r := open("other", "other-pw"); r.StatusCode != http.StatusOK {
		t.Fatalf("another user's stream = %d", r.StatusCode)
	}
}
