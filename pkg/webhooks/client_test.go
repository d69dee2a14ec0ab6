package webhooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestClientRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	var got http.Header
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		got, gotBody = r.Header.Clone(), must(io.ReadAll(r.Body))
	}))
	defer srv.Close()
	body, secret := []byte(`{"kind":"created"}`), []byte("k")
	ctx := context.Background()
	now := time.Now()

	// Default: loopback refused at dial time; "localhost" resolves to
	// loopback, so the name does not help either.
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		a := NewClient(ClientSettings{}).Deliver(ctx, u, secret, body, "d1", now)
		if a.OK() || !strings.Contains(a.Err, "not a public address") || hits.Load() != 0 {
			t.Fatalf("%s: default client attempt %+v, hits %d", u, a, hits.Load())
		}
	}
	// Allowed when configured; the receiver verifies the signature.
	a := NewClient(ClientSettings{AllowPrivate: true}).Deliver(ctx, srv.URL, secret, body, "d1", now)
	if !a.OK() || a.Status != 200 || hits.Load() != 1 {
		t.Fatalf("allowed client attempt %+v, hits %d", a, hits.Load())
	}
	if err := Verify(secret, got.Get(SignatureHeader), gotBody, time.Now(), time.Minute); err != nil || got.Get("X-Cms-Delivery") != "d1" {
		t.Fatalf("received headers %v: %v", got, err)
	}
	if a := NewClient(ClientSettings{AllowPrivate: true}).Deliver(ctx, "ftp://x/", secret, body, "d", now); a.OK() {
		t.Fatal("non-http URL delivered")
	}
}

func TestRefusedAddress(t *testing.T) {
	for addr, refused := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "fc00::1": true, "0.0.0.0": true, "::": true,
		"::ffff:127.0.0.1": true, "100.64.0.1": true, "224.0.0.1": true,
		"93.184.216.34": false, "2606:2800:220:1::1": false, "100.128.0.1": false,
	} {
		if got := refusedAddress(netip.MustParseAddr(addr)); got != refused {
			t.Errorf("refusedAddress(%s) = %v, want %v", addr, got, refused)
		}
	}
}

func TestClientFailuresAndCaps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/big":
			// An endless response: the client reads at most the cap.
			for i := 0; i < 1<<14; i++ {
				if _, err := w.Write(make([]byte, 1024)); err != nil {
					return
				}
			}
		case "/slow":
			time.Sleep(time.Second)
		case "/redirect":
			http.Redirect(w, r, "/", http.StatusFound)
		}
	}))
	defer srv.Close()
	c := NewClient(ClientSettings{AllowPrivate: true, Timeout: 500 * time.Millisecond, MaxResponseBytes: 1024})
	ctx := context.Background()
	if a := c.Deliver(ctx, srv.URL+"/busy", nil, nil, "d", time.Now()); a.OK() || a.Status != 503 || a.RetryAfter != 7*time.Second {
		t.Fatalf("busy: %+v", a)
	}
	if a := c.Deliver(ctx, srv.URL+"/big", nil, nil, "d", time.Now()); !a.OK() || a.Status != 200 {
		t.Fatalf("big: %+v", a)
	}
	if a := c.Deliver(ctx, srv.URL+"/slow", nil, nil, "d", time.Now()); a.OK() || a.Duration > 1500*time.Millisecond {
		t.Fatalf("slow: %+v", a)
	}
	if a := c.Deliver(ctx, srv.URL+"/redirect", nil, nil, "d", time.Now()); a.OK() || a.Status != http.StatusFound {
		t.Fatalf("redirect followed: %+v", a)
	}
}

func TestBackoffFullJitter(t *testing.T) {
	s := RetrySettings{Initial: 100 * time.Millisecond, Max: time.Second, GiveUpAfter: time.Minute}
	for n, ceil := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 9: time.Second} {
		var maxSeen, minSeen time.Duration = 0, ceil
		for range 2000 {
			d := s.Backoff(n, 0)
			if d <= 0 || d > ceil {
				t.Fatalf("Backoff(%d) = %v, outside (0, %v]", n, d, ceil)
			}
			maxSeen, minSeen = max(maxSeen, d), min(minSeen, d)
		}
		// Full jitter spreads over the whole range.
		if maxSeen < ceil*8/10 || minSeen > ceil*2/10 {
			t.Fatalf("Backoff(%d) ranged %v..%v, want most of (0, %v]", n, minSeen, maxSeen, ceil)
		}
	}
	if d := s.Backoff(1, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Fatalf("Retry-After ignored: %v", d)
	}
	if d := s.Backoff(1, time.Hour); d != time.Second {
		t.Fatalf("Retry-After not capped: %v", d)
	}
	t0 := time.Now()
	if s.GivenUp(t0, t0.Add(59*time.Second)) || !s.GivenUp(t0, t0.Add(time.Minute)) {
		t.Fatal("GivenUp boundary")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
