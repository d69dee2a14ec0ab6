package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
)

// BenchmarkBearerVsBasic measures one authenticated Management read
// (GET /apis/cms/v1/branches on `cms run`) with a bearer token — whose
// check reads the user's account, with its session record, from the store
// at the edge — and, as the baseline in the same run, with Basic
// credentials answered by the one-minute cache. It reports both latencies
// and their ratio, for a login's token with an empty session record
// (login) and for a renewed token whose session is one of
// auth.MaxTokenSessions in the user's record, the largest record a bearer
// request reads (full-record).
func BenchmarkBearerVsBasic(b *testing.B) {
	base := benchServerWith(b, TargetAll, func(*Config) {})
	post := func(path, body, token string) authToken {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var tok authToken
		if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
			b.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return tok
	}
	login := func() authToken { return post("/auth/token", `{"user":"admin","password":"test-password"}`, "") }
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
	basic := func(r *http.Request) { r.SetBasicAuth("admin", "test-password") }
	get(basic) // fill the Basic cache
	run := func(b *testing.B, tok authToken) {
		bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok.Token) }
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
	b.Run("login", func(b *testing.B) { run(b, login()) })
	var renewed authToken
	for range auth.MaxTokenSessions {
		renewed = post("/auth/token/renew", "{}", login().Token)
	}
	b.Run("full-record", func(b *testing.B) { run(b, renewed) })
}
