package app

import (
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkBearerVsBasic measures one authenticated Management read
// (GET /apis/cms/v1/branches on `cms run`) with a bearer token — whose
// check reads the user's account from the store, at the edge and again in
// the gRPC interceptor — and, as the baseline in the same run, with Basic
// credentials answered by the one-minute cache. The token is a renewed one
// whose session is one of auth.MaxTokenSessions in the user's session
// record (the largest record a bearer request reads). It reports both
// latencies and their ratio.
func BenchmarkBearerVsBasic(b *testing.B) {
	base := benchServerWith(b, TargetAll, func(*Config) {})
	resp, err := http.Post(base+"/auth/token", "application/json", strings.NewReader(`{"user":"admin","password":"test-password"}`))
	if err != nil {
		b.Fatal(err)
	}
	var tok authToken
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
		b.Fatalf("token: %v", err)
	}
	resp.Body.Close()
	// The worst case of the session record: the token is renewed, its
	// session one of auth.MaxTokenSessions in the user's record.
	renew := func(token string) authToken {
		req, _ := http.NewRequest(http.MethodPost, base+"/auth/token/renew", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var t authToken
		if err := json.NewDecoder(resp.Body).Decode(&t); err != nil || t.Token == "" {
			b.Fatalf("renew: %d %v", resp.StatusCode, err)
		}
		return t
	}
	for range auth.MaxTokenSessions - 1 {
		resp, err := http.Post(base+"/auth/token", "application/json", strings.NewReader(`{"user":"admin","password":"test-password"}`))
		if err != nil {
			b.Fatal(err)
		}
		var other authToken
		_ = json.NewDecoder(resp.Body).Decode(&other)
		resp.Body.Close()
		renew(other.Token)
	}
	tok = renew(tok.Token)
	get := func(auth func(*http.Request)) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, base+"/branches", nil)
		auth(req)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok.Token) }
	basic := func(r *http.Request) { r.SetBasicAuth("admin", "test-password") }
	get(basic) // fill the Basic cache
	var bearerTime, basicTime time.Duration
	for b.Loop() {
		bearerTime += get(bearer)
		basicTime += get(basic)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bearerTime.Microseconds())/n, "bearer-µs/op")
	b.ReportMetric(float64(basicTime.Microseconds())/n, "basic-µs/op")
	b.ReportMetric(float64(bearerTime)/float64(basicTime), "bearer/basic")
}
