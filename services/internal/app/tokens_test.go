package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Bearer tokens (issue 30): POST /apis/cms/v1/auth/token trades
// credentials for a token every group accepts over HTTP and gRPC until it
// expires, is renewed, or its user logs out or changes the password — seen
// at once by every process, since each token check reads the store.

// tokenGroups are the four API groups; each names a cheap authenticated
// HTTP request and gRPC call that succeed for the administrator.
var tokenGroups = []struct {
	name, method, path, body string
	grpc                     func(ctx context.Context, conn *grpc.ClientConn) error
}{
	{"management", "GET", "/apis/cms/v1/branches", "", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := managementv1.NewManagementServiceClient(c).GetBranches(ctx, &managementv1.GetBranchesRequest{})
		return err
	}},
	{"delivery", "GET", "/delivery/api/branches", "", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := deliveryv1.NewDeliveryServiceClient(c).GetBranches(ctx, &deliveryv1.GetBranchesRequest{})
		return err
	}},
	{"index", "POST", "/apis/index/v1/utilities/matchStrings", `{"query":"a","strings":["a"]}`, func(ctx context.Context, c *grpc.ClientConn) error {
		q := "a"
		_, err := indexv1.NewIndexServiceClient(c).MatchStrings(ctx, &indexv1.MatchStringsRequest{Query: &q, Strings: []string{"a"}})
		return err
	}},
	{"rendering", "GET", "/apis/rendering/v1/branches/4/css/app-styles.css", "", func(ctx context.Context, c *grpc.ClientConn) error {
		s, err := renderingv1.NewRenderingServiceClient(c).GetAppStylesCss(ctx, &renderingv1.GetAppStylesCssRequest{BranchId: "4"})
		if err != nil {
			return err
		}
		_, err = s.Recv()
		if err == io.EOF {
			err = nil
		}
		return err
	}},
}

// tokenSystem is one setup: the HTTP base URL and gRPC address serving
// each group (one process embedded, one per group distributed).
type tokenSystem struct {
	http, grpc map[string]string
}

var tokenSystems = []struct {
	name  string
	start func(t *testing.T, mod func(*Config)) tokenSystem
}{
	{"embedded", func(t *testing.T, mod func(*Config)) tokenSystem {
		srv, _ := edgeServerGRPC(t, mod)
		sys := tokenSystem{http: map[string]string{}, grpc: map[string]string{}}
		for _, g := range tokenGroups {
			sys.http[g.name], sys.grpc[g.name] = "http://"+srv.HTTPAddr(), srv.GRPCAddr()
		}
		return sys
	}},
	{"distributed", func(t *testing.T, mod func(*Config)) tokenSystem {
		config, _ := isolatedDistributed(t, "tokens")
		sys := tokenSystem{http: map[string]string{}, grpc: map[string]string{}}
		for _, target := range []string{TargetManagement, TargetIndexer, TargetDelivery, TargetIndex, TargetRendering} {
			cfg := config(target)
			if mod != nil {
				mod(&cfg)
			}
			srv := startConfigured(t, cfg)
			sys.http[target], sys.grpc[target] = "http://"+srv.HTTPAddr(), srv.GRPCAddr()
		}
		return sys
	}},
}

// authToken is the answer of the token operations.
type authToken struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expiresAt"`
}

func (a authToken) expires(t *testing.T) time.Time {
	t.Helper()
	e, err := time.Parse(time.RFC3339Nano, a.ExpiresAt)
	if err != nil {
		t.Fatalf("expiresAt %q: %v", a.ExpiresAt, err)
	}
	return e
}

// login posts credentials to the token endpoint as JSON.
func login(t *testing.T, base, user, password string) httpResult {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"user": user, "password": password})
	return httpClient{t: t, base: base}.do("POST", "/apis/cms/v1/auth/token", string(b), "Authorization", "")
}

func tokenOf(t *testing.T, r httpResult) authToken {
	t.Helper()
	var a authToken
	if r.code != http.StatusOK || json.Unmarshal(r.body, &a) != nil || !strings.HasPrefix(a.Token, "cms2.") {
		t.Fatalf("token answer %d %s", r.code, r.body)
	}
	return a
}

// bearer calls a group over HTTP with the token.
func (s tokenSystem) bearer(t *testing.T, group int, token string) httpResult {
	t.Helper()
	g := tokenGroups[group]
	return httpClient{t: t, base: s.http[g.name]}.doUntilAvailable(transientWait, g.method, g.path, g.body, "Authorization", "Bearer "+token)
}

// transientWait is how long the token checks send again a request that
// answered 503 with Retry-After, or gRPC Unavailable (a component of a
// freshly started distributed system, e.g. a new index's shards starting on
// a loaded machine), as a client would; any other answer counts at once.
const transientWait = 5 * time.Second

// bearerGRPC calls a group over gRPC with the token in the metadata.
func (s tokenSystem) bearerGRPC(t *testing.T, group int, token string) codes.Code {
	t.Helper()
	g := tokenGroups[group]
	conn, err := grpc.NewClient(s.grpc[g.name], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for deadline := time.Now().Add(transientWait); ; {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+token), 20*time.Second)
		err := g.grpc(ctx, conn)
		cancel()
		if status.Code(err) != codes.Unavailable || time.Now().After(deadline) {
			return status.Code(err)
		}
		t.Logf("gRPC %s: Unavailable, sent again: %v", g.name, err)
		time.Sleep(200 * time.Millisecond)
	}
}

// wantEverywhere checks the token on every group over HTTP and gRPC:
// accepted (2xx, OK) or refused (401 with both challenges, Unauthenticated).
func (s tokenSystem) wantEverywhere(t *testing.T, what, token string, accepted bool) {
	t.Helper()
	for i, g := range tokenGroups {
		r := s.bearer(t, i, token)
		code := s.bearerGRPC(t, i, token)
		switch {
		case accepted && (r.code < 200 || r.code > 299 || code != codes.OK):
			t.Errorf("%s: %s %s = %d (gRPC %s), want accepted: %s", what, g.method, g.path, r.code, code, r.body)
		case !accepted && (r.code != http.StatusUnauthorized || code != codes.Unauthenticated):
			t.Errorf("%s: %s %s = %d (gRPC %s), want 401: %s", what, g.method, g.path, r.code, code, r.body)
		case !accepted && (!strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
			!strings.HasPrefix(r.header.Values("WWW-Authenticate")[0], "Basic ") ||
			!strings.HasPrefix(r.header.Values("WWW-Authenticate")[len(r.header.Values("WWW-Authenticate"))-1], "Bearer ")):
			t.Errorf("%s: %s %s: 401 without ProblemDetails or challenges: %v %s", what, g.method, g.path, r.header, r.body)
		}
	}
}

// TestBearerTokens: issue (JSON and Basic), use on all four groups over
// HTTP and gRPC, renew, tampering, logout and a password change, on both
// setups; in the distributed one the password changes through Management
// and the token is refused at once by the Delivery, Index and Rendering
// processes.
func TestBearerTokens(t *testing.T) {
	for _, sys := range tokenSystems {
		t.Run(sys.name, func(t *testing.T) {
			s := sys.start(t, nil)
			mgmt := s.http["management"]
			issued := time.Now()
			tok := tokenOf(t, login(t, mgmt, "admin", "test-password"))
			if e := tok.expires(t); e.Before(issued.Add(15*time.Minute-5*time.Second)) || e.After(time.Now().Add(15*time.Minute+time.Second)) {
				t.Errorf("expiresAt %s, want about 15m from %s", e, issued)
			}
			s.wantEverywhere(t, "a fresh token", tok.Token, true)

			// Basic credentials and an empty body work too.
			viaBasic := tokenOf(t, httpClient{t, mgmt, "admin", "test-password"}.do("POST", "/apis/cms/v1/auth/token", "{}"))
			s.wantEverywhere(t, "a token for Basic credentials", viaBasic.Token, true)

			// Wrong credentials: 401 ProblemDetails with a Basic challenge.
			for _, r := range []httpResult{login(t, mgmt, "admin", "wrong"), login(t, mgmt, "nobody", "x"), login(t, mgmt, "", ""),
				httpClient{t, mgmt, "admin", "wrong"}.do("POST", "/apis/cms/v1/auth/token", "{}")} {
				if r.code != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic ") ||
					!strings.Contains(string(r.body), `"status":401`) {
					t.Errorf("wrong credentials: %d %v %s", r.code, r.header, r.body)
				}
			}

			// The login body is credentials only: 4 KiB, declared or read.
			big := `{"user":"admin","password":"` + strings.Repeat("p", 5000) + `"}`
			if r := login(t, mgmt, "admin", strings.Repeat("p", 5000)); r.code != http.StatusRequestEntityTooLarge {
				t.Errorf("a 5 KB login body = %d %s, want 413", r.code, r.body)
			}
			chunked, _ := http.NewRequest("POST", mgmt+"/apis/cms/v1/auth/token", io.MultiReader(strings.NewReader(big)))
			chunked.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(chunked); err != nil {
				t.Fatal(err)
			} else {
				resp.Body.Close()
				if resp.StatusCode < 400 || resp.StatusCode > 499 || chunked.ContentLength != 0 {
					t.Errorf("a 5 KB chunked login body = %d (length %d), want 4xx", resp.StatusCode, chunked.ContentLength)
				}
			}

			// Tampered and forged tokens.
			flipped := []byte(tok.Token)
			flipped[len(flipped)/2] ^= 1
			body, sig, _ := strings.Cut(strings.TrimPrefix(tok.Token, "cms2."), ".")
			other := []byte(body) // the user id's last byte changed, the signature kept
			other[10] = map[bool]byte{true: 'B', false: 'A'}[other[10] == 'A']
			for what, forged := range map[string]string{
				"a tampered token": string(flipped), "a token without signature": "cms2." + body + ".",
				"a JWT with alg none": "eyJhbGciOiJub25lIn0.e30.", "another payload with the signature": "cms2." + string(other) + "." + sig,
			} {
				s.wantEverywhere(t, what, forged, false)
			}

			// Renew: the successor; the renewed token is refused from now
			// on in every process, except that renewing it again (another
			// tab) within the grace answers the same successor.
			rr := httpClient{t: t, base: mgmt}.do("POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+tok.Token)
			renewed := tokenOf(t, rr)
			if renewed.Token == tok.Token {
				t.Fatalf("renew answered the same token")
			}
			s.wantEverywhere(t, "a renewed token", renewed.Token, true)
			s.wantEverywhere(t, "the token after its renewal", tok.Token, false)
			if r := s.bearer(t, 1, tok.Token); !strings.Contains(string(r.body), "was renewed") {
				t.Errorf("the renewed token's refusal: %s", r.body)
			}
			if again := tokenOf(t, httpClient{t: t, base: mgmt}.do("POST", "/apis/cms/v1/auth/token/renew", "{}",
				"Authorization", "Bearer "+tok.Token)); again != renewed {
				t.Errorf("a second renewal of the same token = %+v, want the first's %+v", again, renewed)
			}
			s.wantEverywhere(t, "the successor after a second renewal of its predecessor", renewed.Token, true)
			if r := (httpClient{t: t, base: mgmt}).do("POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+string(flipped)); r.code != http.StatusUnauthorized {
				t.Errorf("renew with a tampered token = %d %s", r.code, r.body)
			}

			// Logout revokes every token of the user, in every process.
			lo := httpClient{t: t, base: mgmt}.do("POST", "/apis/cms/v1/auth/logout", "{}", "Authorization", "Bearer "+renewed.Token)
			if lo.code != http.StatusOK {
				t.Fatalf("logout = %d %s", lo.code, lo.body)
			}
			for what, s2 := range map[string]string{"the token after logout": tok.Token, "the renewed token after logout": renewed.Token,
				"the Basic-issued token after logout": viaBasic.Token} {
				s.wantEverywhere(t, what, s2, false)
			}
			// Basic credentials are not affected, and a new login works.
			httpClient{t, mgmt, "admin", "test-password"}.must(http.StatusOK, "GET", "/apis/cms/v1/branches", "")
			s.wantEverywhere(t, "a token issued after logout", tokenOf(t, login(t, mgmt, "admin", "test-password")).Token, true)

			// A password change revokes the user's tokens at once.
			admin := httpClient{t, mgmt, "admin", "test-password"}
			w := admin.create(obj(110, "", v(1100, 0, "studio"), v(1000, 201, "Studio"), v(1101, 0, "studio-pw"), v(1102, 0, true)))
			id := strconv.FormatInt(w.CreatedObjectIDs[0], 10)
			studio := tokenOf(t, login(t, mgmt, "studio", "studio-pw"))
			s.wantEverywhere(t, "the user's token", studio.Token, true)
			// Its renewal writes the session record (1107), which no read
			// returns, not even an administrator's.
			studio = tokenOf(t, httpClient{t: t, base: mgmt}.do("POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+studio.Token))
			if r := admin.must(http.StatusOK, "GET", "/apis/cms/v1/branches/4/objects/"+id, ""); strings.Contains(string(r.body), `"attribute":1107`) ||
				!strings.Contains(string(r.body), `"attribute":1100`) {
				t.Errorf("the user object as read by an administrator: %s", r.body)
			}
			admin.must(http.StatusOK, "PATCH", "/apis/cms/v1/branches/4/objects",
				`{"objects":[{"meta":{"id":`+id+`,"typeRef":110},"values":[`+v(1101, 0, "studio-pw2")+`]}]}`)
			s.wantEverywhere(t, "the token after a password change", studio.Token, false)
			s.wantEverywhere(t, "a token for the new password", tokenOf(t, login(t, mgmt, "studio", "studio-pw2")).Token, true)
		})
	}
}

// TestBearerTokenExpires: a token is accepted until expiresAt and refused
// from then on (authTokenLifetime 1s), renewing included.
func TestBearerTokenExpires(t *testing.T) {
	s := tokenSystems[0].start(t, func(c *Config) { c.AuthTokenLifetime = time.Second })
	mgmt := s.http["management"]
	tok := tokenOf(t, login(t, mgmt, "admin", "test-password"))
	exp := tok.expires(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := s.bearer(t, 0, tok.Token)
		if r.code == http.StatusUnauthorized {
			if now := time.Now(); now.Before(exp) {
				t.Fatalf("refused at %s, before expiresAt %s", now, exp)
			}
			break
		}
		if r.code != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("token still answered %d at %s (expiresAt %s): %s", r.code, time.Now(), exp, r.body)
		}
		time.Sleep(50 * time.Millisecond) // polling the clock-driven expiry
	}
	s.wantEverywhere(t, "an expired token", tok.Token, false)
	if r := (httpClient{t: t, base: mgmt}).do("POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+tok.Token); r.code != http.StatusUnauthorized {
		t.Errorf("renewing an expired token = %d %s", r.code, r.body)
	}
}

// TestTokenEndpointThrottled: the token endpoint meets the login guard of
// Basic: after LoginUserFailures wrong passwords the user name is locked,
// 429 with Retry-After even for the right password, over JSON and Basic,
// on the token endpoint and on every other operation alike.
func TestTokenEndpointThrottled(t *testing.T) {
	for _, sys := range tokenSystems {
		t.Run(sys.name, func(t *testing.T) {
			s := sys.start(t, func(c *Config) { c.Edge.LoginUserFailures, c.Edge.LoginBackoff = 2, time.Minute })
			mgmt := s.http["management"]
			for range 2 {
				if r := login(t, mgmt, "admin", "wrong"); r.code != http.StatusUnauthorized {
					t.Fatalf("wrong password = %d %s", r.code, r.body)
				}
			}
			for what, r := range map[string]httpResult{
				"JSON":            login(t, mgmt, "admin", "test-password"),
				"Basic":           httpClient{t, mgmt, "admin", "test-password"}.do("POST", "/apis/cms/v1/auth/token", "{}"),
				"another request": httpClient{t, mgmt, "admin", "test-password"}.do("GET", "/apis/cms/v1/jobs", ""),
			} {
				ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
				if r.code != http.StatusTooManyRequests || ra < 1 || !strings.Contains(string(r.body), `"status":429`) {
					t.Errorf("%s after 2 failures = %d (Retry-After %q) %s, want 429", what, r.code, r.header.Get("Retry-After"), r.body)
				}
			}
		})
	}
}

// TestBearerTokenSurvivesRestart: `cms run` keeps its generated key in the
// data directory, so a token outlives a restart of the process.
func TestBearerTokenSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	srv, _, stop := startLoggedStop(t, cfg)
	base := "http://" + srv.HTTPAddr()
	tok := tokenOf(t, login(t, base, "admin", "test-password"))
	httpClient{t: t, base: base}.must(http.StatusOK, "GET", "/apis/cms/v1/branches", "", "Authorization", "Bearer "+tok.Token)
	stop()
	srv2, _ := startLogged(t, cfg)
	r := httpClient{t: t, base: "http://" + srv2.HTTPAddr()}.do("GET", "/apis/cms/v1/branches", "", "Authorization", "Bearer "+tok.Token)
	if r.code != http.StatusOK {
		t.Fatalf("after a restart the token answers %d %s", r.code, r.body)
	}
}

// TestTokenOperationsMatchTheServedDocument: the exchanges of the three
// token operations, answers and errors, are what the served Management
// document says (pkg/openapitest).
func TestTokenOperationsMatchTheServedDocument(t *testing.T) {
	base, _ := edgeServer(t, nil)
	mgmt := loadServedDoc(t, "Management")
	anon := httpClient{t: t, base: base}
	body := `{"user":"admin","password":"test-password"}`
	r := anon.do("POST", "/apis/cms/v1/auth/token", body, "Authorization", "")
	mgmt.check(t, "POST", "/apis/cms/v1/auth/token", body, r)
	tok := tokenOf(t, r)
	wrong := `{"user":"admin","password":"wrong"}`
	r = anon.do("POST", "/apis/cms/v1/auth/token", wrong, "Authorization", "")
	if r.code != http.StatusUnauthorized {
		t.Fatalf("wrong password = %d %s", r.code, r.body)
	}
	mgmt.check(t, "POST", "/apis/cms/v1/auth/token", wrong, r)
	r = anon.must(http.StatusOK, "POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+tok.Token)
	mgmt.check(t, "POST", "/apis/cms/v1/auth/token/renew", "{}", r)
	tok = tokenOf(t, r) // the renewed token is refused from now on
	r = anon.must(http.StatusOK, "POST", "/apis/cms/v1/auth/logout", "{}", "Authorization", "Bearer "+tok.Token)
	mgmt.check(t, "POST", "/apis/cms/v1/auth/logout", "{}", r)
	r = anon.must(http.StatusUnauthorized, "POST", "/apis/cms/v1/auth/token/renew", "{}", "Authorization", "Bearer "+tok.Token)
	mgmt.check(t, "POST", "/apis/cms/v1/auth/token/renew", "{}", r)
}

// TestIssueTokenOverGRPC: gRPC clients log in with the RPC itself and use
// the token in the authorization metadata.
func TestIssueTokenOverGRPC(t *testing.T) {
	srv, _ := edgeServerGRPC(t, nil)
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := managementv1.NewManagementServiceClient(conn)
	if _, err := c.IssueToken(t.Context(), &managementv1.IssueTokenRequest{User: "admin", Password: "wrong"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong password: %v", err)
	}
	tok, err := c.IssueToken(t.Context(), &managementv1.IssueTokenRequest{User: "admin", Password: "test-password"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+tok.GetToken())
	if _, err := c.GetBranches(ctx, &managementv1.GetBranchesRequest{}); err != nil {
		t.Fatalf("GetBranches with the token: %v", err)
	}
	if _, err := c.Logout(ctx, &managementv1.LogoutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBranches(ctx, &managementv1.GetBranchesRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("after logout: %v", err)
	}
}

// oneAccount is an auth.Accounts of one user.
type oneAccount struct{ p auth.Principal }

func (o oneAccount) Account(context.Context, int64) (auth.Principal, error) { return o.p, nil }
func (o oneAccount) RevokeTokens(context.Context, int64) error              { return nil }
func (o oneAccount) UpdateTokenSessions(_ context.Context, _ int64, f func(auth.Principal) (string, bool, error)) error {
	_, _, err := f(o.p)
	return err
}

// TestTokenKeyChoice: the configured key wins; without one, the SQLite
// store uses the key generated once into the data directory (mode 0600),
// and PostgreSQL turns tokens off rather than sign with a key of its own.
func TestTokenKeyChoice(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	user := oneAccount{auth.Principal{Name: "u", UserID: 7, Credential: "c"}}
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	first, err := newTokens(cfg, user, log)
	if err != nil || first == nil {
		t.Fatalf("SQLite without a key: %v, %v", first, err)
	}
	fi, err := os.Stat(filepath.Join(cfg.DataDir, tokenKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	tok, err := first.Issue(user.p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := newTokens(cfg, user, log) // the next start
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Verify(t.Context(), tok.Token); err != nil {
		t.Fatalf("the next start refuses the token: %v", err)
	}
	cfg.Store.Engine = EnginePostgres
	if off, err := newTokens(cfg, user, log); err != nil || off != nil {
		t.Fatalf("PostgreSQL without a key: %v, %v (want tokens off)", off, err)
	}
	cfg.AuthTokenKey = strings.Repeat("s", 32)
	on, err := newTokens(cfg, user, log)
	if err != nil || on == nil {
		t.Fatalf("PostgreSQL with a key: %v, %v", on, err)
	}
	if _, err := on.Verify(t.Context(), tok.Token); err == nil {
		t.Fatal("a token of another key was accepted")
	}
	cfg.AuthTokenKey = "short"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "authTokenKey") {
		t.Fatalf("a short key: %v", err)
	}
}
