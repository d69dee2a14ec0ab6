package app

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// stalledAuthBound is how soon an anonymous request with a stalled body
// must get its 401: credentials are checked on the headers, before any
// byte of the body is waited for (typically a millisecond or two; the
// bound leaves room for a loaded machine, far below the read timeout).
const stalledAuthBound = time.Second

// TestStalledBodyIsAuthenticatedFirst: an anonymous request declaring
// Content-Length: 100000 and sending 12 bytes of it gets its 401 with
// WWW-Authenticate at once, on every route of the REST gateway and on
// unknown paths under each base path, instead of after the read timeout
// (net/http used to read the rest of the body before sending the 401).
func TestStalledBodyIsAuthenticatedFirst(t *testing.T) {
	const readTimeout = 5 * time.Second
	base, _ := edgeServer(t, func(c *Config) {
		hostileEdge(c)
		c.Edge.ReadTimeout = readTimeout
	})
	addr := strings.TrimPrefix(base, "http://")
	type target struct{ method, path string }
	var targets []target
	for _, d := range declaredRPCs() {
		req := mustRequest(t, base, d, rpcParts{})
		targets = append(targets, target{d.method, req.URL.RequestURI()})
	}
	for _, b := range apiBasePaths {
		targets = append(targets, target{"POST", b + "/no/such/route"}, target{"PUT", b})
	}
	var mu sync.Mutex
	var slowest time.Duration
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, tg := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			code, challenge, took, err := stalledRequest(addr, tg.method, tg.path, readTimeout+5*time.Second)
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, took)
			// The token endpoint takes its credentials in the body: a
			// declared body above its 4 KiB is refused at once instead.
			want := http.StatusUnauthorized
			if tg.path == "/apis/cms/v1/auth/token" {
				want, challenge = http.StatusRequestEntityTooLarge, "Basic realm="
			}
			switch {
			case err != nil:
				t.Errorf("%s %s: %v after %v", tg.method, tg.path, err, took)
			case code != want || !strings.HasPrefix(challenge, "Basic realm="):
				t.Errorf("%s %s: %d, WWW-Authenticate %q", tg.method, tg.path, code, challenge)
			case took > stalledAuthBound:
				t.Errorf("%s %s: 401 after %v with a stalled body, want it within %v", tg.method, tg.path, took, stalledAuthBound)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d routes: the slowest 401 came after %v", len(targets), slowest)
}

// stalledRequest sends the headers of an anonymous request declaring a
// 100000-byte body and 12 bytes of it, then waits for the answer.
func stalledRequest(addr, method, path string, wait time.Duration) (int, string, time.Duration, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, "", 0, err
	}
	defer conn.Close()
	start := time.Now()
	if _, err := fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: cms\r\nContent-Type: application/json\r\n"+
		"Content-Length: 100000\r\n\r\n{\"objects\":[", method, path); err != nil {
		return 0, "", 0, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	if err != nil {
		return 0, "", took, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), took, nil
}
