package app

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// tokenClock is a settable clock for the bearer tokens of a test's
// processes (Config.tokenClock).
type tokenClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tokenClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *tokenClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// renewHTTP renews token over REST.
func renewHTTP(t *testing.T, base, token string) httpResult {
	t.Helper()
	return httpClient{t: t, base: base}.do("POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+token)
}

// renewGRPC renews token with the RPC.
func (s tokenSystem) renewGRPC(t *testing.T, token string) (*managementv1.AuthToken, error) {
	t.Helper()
	conn, err := grpc.NewClient(s.grpc["management"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+token)
	return managementv1.NewManagementServiceClient(conn).RenewToken(ctx, &managementv1.RenewTokenRequest{})
}

// TestBearerSessionMaxAge: renewals keep the session's login time; a
// renewed token expires with the session (authSessionMaxAge after the
// login) at the latest; from then on every process refuses the session's
// tokens and a renewal answers 401 saying the session expired and the user
// must log in again, over REST and gRPC; a new login starts a new session.
// A renewal over gRPC of a token just renewed over REST (a second tab)
// answers the same successor.
func TestBearerSessionMaxAge(t *testing.T) {
	for _, sys := range tokenSystems {
		t.Run(sys.name, func(t *testing.T) {
			clk := &tokenClock{t: time.Now()}
			s := sys.start(t, func(c *Config) {
				c.tokenClock, c.AuthTokenLifetime, c.AuthSessionMaxAge = clk.now, 20*time.Minute, time.Hour
			})
			mgmt := s.http["management"]
			start := clk.now().Truncate(time.Second)
			tok := tokenOf(t, login(t, mgmt, "admin", "test-password"))
			clk.add(15 * time.Minute)
			tok = tokenOf(t, renewHTTP(t, mgmt, tok.Token))
			clk.add(15 * time.Minute)
			tok = tokenOf(t, renewHTTP(t, mgmt, tok.Token))
			clk.add(15 * time.Minute) // 45 minutes: the successor ends with the session
			prev := tok
			tok = tokenOf(t, renewHTTP(t, mgmt, tok.Token))
			if e := tok.expires(t); !e.Equal(start.Add(time.Hour)) {
				t.Errorf("renewed 45m after the login: expiresAt %s, want the session's end %s", e, start.Add(time.Hour))
			}
			again, err := s.renewGRPC(t, prev.Token)
			if err != nil || again.GetToken() != tok.Token {
				t.Errorf("renewing the same token again over gRPC = %v, %v; want the same successor", again, err)
			}
			s.wantEverywhere(t, "the session's newest token", tok.Token, true)
			clk.add(15*time.Minute - time.Second)
			s.wantEverywhere(t, "a second before the session's end", tok.Token, true)
			clk.add(time.Second)
			s.wantEverywhere(t, "at the session's end", tok.Token, false)
			for what, r := range map[string]httpResult{"a request": s.bearer(t, 1, tok.Token), "a renewal": renewHTTP(t, mgmt, tok.Token)} {
				if r.code != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
					!strings.Contains(string(r.body), "the session expired") || !strings.Contains(string(r.body), "log in again") {
					t.Errorf("%s after the session's end = %d %s, want 401 saying the session expired", what, r.code, r.body)
				}
			}
			if _, err := s.renewGRPC(t, tok.Token); status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "the session expired") {
				t.Errorf("a gRPC renewal after the session's end: %v", err)
			}
			s.wantEverywhere(t, "a new login", tokenOf(t, login(t, mgmt, "admin", "test-password")).Token, true)
		})
	}
}

// TestTokenMetrics: cms_auth_tokens_total counts issued, renewed and
// revoked tokens, and presented tokens refused as superseded, expired,
// session_expired or refused.
func TestTokenMetrics(t *testing.T) {
	clk := &tokenClock{t: time.Now()}
	s := tokenSystems[0].start(t, func(c *Config) {
		c.tokenClock, c.AuthTokenLifetime, c.AuthSessionMaxAge = clk.now, 10*time.Minute, time.Hour
	})
	mgmt := s.http["management"]
	a := tokenOf(t, login(t, mgmt, "admin", "test-password"))
	a1 := tokenOf(t, renewHTTP(t, mgmt, a.Token))
	s.bearer(t, 0, a.Token)          // superseded
	s.bearer(t, 0, "cms2.AAAA.AAAA") // refused
	b := tokenOf(t, login(t, mgmt, "admin", "test-password"))
	httpClient{t: t, base: mgmt}.must(http.StatusOK, "POST", "/apis/cms/v1/auth/logout", "{}", "Authorization", "Bearer "+b.Token)
	clk.add(11 * time.Minute)
	s.bearer(t, 0, a1.Token) // expired
	clk.add(50 * time.Minute)
	s.bearer(t, 0, a1.Token) // session_expired
	got := scrape(t, mgmt)
	for result, n := range map[string]float64{"issued": 2, "renewed": 1, "revoked": 1, "superseded": 1, "refused": 1, "expired": 1, "session_expired": 1} {
		if name := `cms_auth_tokens_total{result="` + result + `"}`; got[name] != n {
			t.Errorf("%s = %v, want %v", name, got[name], n)
		}
	}
}

// TestSessionMaxAgeValidated: authSessionMaxAge is 1m to 30d and at least
// authTokenLifetime; a process does not start otherwise, naming both.
func TestSessionMaxAgeValidated(t *testing.T) {
	for maxAge, want := range map[time.Duration]string{
		30 * time.Second:    "authSessionMaxAge 30s: want 1m0s to 720h0m0s",
		31 * 24 * time.Hour: "authSessionMaxAge 744h0m0s: want 1m0s to 720h0m0s",
		10 * time.Minute:    "authSessionMaxAge 10m0s is shorter than authTokenLifetime 15m0s",
	} {
		cfg := DefaultConfig()
		cfg.DataDir, cfg.HTTPAddr, cfg.GRPCAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
		cfg.AdminPassword = "test-password"
		cfg.AuthSessionMaxAge = maxAge
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("authSessionMaxAge %s: Validate = %v, want %q", maxAge, err, want)
		}
		if _, err := Complete(t.Context(), cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "config: ") {
			t.Errorf("authSessionMaxAge %s: the process started: %v", maxAge, err)
		}
	}
	cfg := DefaultConfig()
	cfg.AuthSessionMaxAge = cfg.AuthTokenLifetime
	if err := cfg.Validate(); err != nil {
		t.Errorf("a maximum age equal to the lifetime: %v", err)
	}
}
