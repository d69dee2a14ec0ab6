package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// The caller's own account (Auth_GetAccount, Auth_ChangePassword): a user
// without access to branch 4, where its user object lives, reads its own
// grants and changes its own password; the change revokes its tokens in
// every process and answers a fresh one.

type accountAnswer struct {
	UserID        int32   `json:"userId"`
	UserName      string  `json:"userName"`
	Admin         bool    `json:"admin"`
	Internal      bool    `json:"internal"`
	ReadBranches  []int32 `json:"readBranches"`
	WriteBranches []int32 `json:"writeBranches"`
}

func TestOwnAccount(t *testing.T) {
	for _, sys := range tokenSystems {
		t.Run(sys.name, func(t *testing.T) {
			// A lock lasts a minute here (1 s by default), so that the check
			// after it does not race a loaded machine.
			s := sys.start(t, func(c *Config) { c.Edge.LoginBackoff, c.Edge.LoginMaxBackoff = time.Minute, 5*time.Minute })
			mgmt := s.http["management"]
			admin := httpClient{t, mgmt, "admin", "test-password"}
			br := admin.must(http.StatusOK, "POST", "/apis/cms/v1/branches",
				`{"values":[`+v(1000, 201, "Own account")+`,`+v(4000, 0, 4)+`]}`)
			var branch struct {
				Meta struct {
					ID int32 `json:"id"`
				} `json:"meta"`
			}
			if err := json.Unmarshal(br.body, &branch); err != nil || branch.Meta.ID == 0 {
				t.Fatalf("create branch: %s", br.body)
			}
			w := admin.create(obj(110, "", v(1100, 0, "carla"), v(1000, 201, "Carla"), v(1101, 0, "carla-pw"),
				v(1104, 0, branch.Meta.ID, 0)))
			id := w.CreatedObjectIDs[0]

			tok := tokenOf(t, login(t, mgmt, "carla", "carla-pw"))
			bearer := func(method, path, body, token string) httpResult {
				return httpClient{t: t, base: mgmt}.do(method, path, body, "Authorization", "Bearer "+token)
			}
			r := bearer("GET", "/apis/cms/v1/auth/account", "", tok.Token)
			var a accountAnswer
			if r.code != http.StatusOK || json.Unmarshal(r.body, &a) != nil {
				t.Fatalf("GET /auth/account = %d %s", r.code, r.body)
			}
			if a.UserID != int32(id) || a.UserName != "carla" || a.Admin || a.Internal || !slices.Equal(a.ReadBranches, []int32{branch.Meta.ID}) || len(a.WriteBranches) != 0 {
				t.Errorf("the account = %+v, want carla (%d) reading branch %d only", a, id, branch.Meta.ID)
			}
			// The user object itself stays out of reach: it lives on branch 4.
			if r := bearer("GET", "/apis/cms/v1/branches/4/objects/"+strconv.FormatInt(id, 10), "", tok.Token); r.code != http.StatusForbidden {
				t.Errorf("reading the own user object on branch 4 = %d, want 403: %s", r.code, r.body)
			}
			// A grant changed by an administrator shows at once.
			admin.must(http.StatusOK, "PATCH", "/apis/cms/v1/branches/4/objects",
				`{"objects":[{"meta":{"id":`+strconv.FormatInt(id, 10)+`,"typeRef":110},"values":[`+v(1105, 0, branch.Meta.ID, 0)+`]}]}`)
			if r := bearer("GET", "/apis/cms/v1/auth/account", "", tok.Token); !strings.Contains(string(r.body), `"writeBranches":[`+strconv.Itoa(int(branch.Meta.ID))+`]`) {
				t.Errorf("the account after a write grant: %d %s", r.code, r.body)
			}

			// A wrong current password, an empty or too long new one: 400,
			// and the caller stays signed in.
			for what, body := range map[string]string{
				"a wrong current password": `{"currentPassword":"nope","newPassword":"carla-pw2"}`,
				"no current password":      `{"newPassword":"carla-pw2"}`,
				"an empty new password":    `{"currentPassword":"carla-pw","newPassword":"  "}`,
				"a 73-byte new password":   `{"currentPassword":"carla-pw","newPassword":"` + strings.Repeat("p", 73) + `"}`,
			} {
				if r := bearer("POST", "/apis/cms/v1/auth/password", body, tok.Token); r.code != http.StatusBadRequest ||
					!strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
					t.Errorf("%s = %d %s, want 400 ProblemDetails", what, r.code, r.body)
				}
			}
			s.wantAuthenticated(t, "the token after refused password changes", tok.Token)

			r = bearer("POST", "/apis/cms/v1/auth/password", `{"currentPassword":"carla-pw","newPassword":"carla-pw2"}`, tok.Token)
			var changed struct {
				Token authToken `json:"token"`
			}
			if r.code != http.StatusOK || json.Unmarshal(r.body, &changed) != nil || !strings.HasPrefix(changed.Token.Token, "cms2.") {
				t.Fatalf("change the password = %d %s", r.code, r.body)
			}
			s.wantEverywhere(t, "the token before the password change", tok.Token, false)
			s.wantAuthenticated(t, "the token the change answered", changed.Token.Token)
			if r := login(t, mgmt, "carla", "carla-pw"); r.code != http.StatusUnauthorized {
				t.Errorf("the old password after the change = %d %s", r.code, r.body)
			}
			s.wantAuthenticated(t, "a login with the new password", tokenOf(t, login(t, mgmt, "carla", "carla-pw2")).Token)
			httpClient{t, mgmt, "carla", "carla-pw2"}.must(http.StatusOK, "GET", "/apis/cms/v1/auth/account", "")

			// Acting for another user changes nobody's password.
			if r := admin.do("POST", "/apis/cms/v1/auth/password", `{"currentPassword":"test-password","newPassword":"x-pw"}`,
				"X-CmsApi-Username", "carla"); r.code != http.StatusForbidden {
				t.Errorf("a password change acting for another user = %d %s, want 403", r.code, r.body)
			}
			// Wrong current passwords count like failed logins: the user name
			// is locked (429 + Retry-After), even for the right password.
			admin.create(obj(110, "", v(1100, 0, "erik"), v(1000, 201, "Erik"), v(1101, 0, "erik-pw")))
			erik := tokenOf(t, login(t, mgmt, "erik", "erik-pw"))
			var locked httpResult
			for i := 0; i < 8 && locked.code != http.StatusTooManyRequests; i++ {
				locked = bearer("POST", "/apis/cms/v1/auth/password", `{"currentPassword":"guess-`+strconv.Itoa(i)+`","newPassword":"x-pw"}`, erik.Token)
			}
			if locked.code != http.StatusTooManyRequests || locked.header.Get("Retry-After") == "" {
				t.Errorf("guessing the current password: %d %v %s, want 429 with Retry-After", locked.code, locked.header, locked.body)
			}
			if r := bearer("POST", "/apis/cms/v1/auth/password", `{"currentPassword":"erik-pw","newPassword":"x-pw"}`, erik.Token); r.code != http.StatusTooManyRequests {
				t.Errorf("the right current password while locked = %d %s, want 429", r.code, r.body)
			}
			// A deleted (disabled) user is refused: its token no longer works.
			admin.must(http.StatusOK, "DELETE", "/apis/cms/v1/branches/4/objects", `{"objectIds":["`+strconv.FormatInt(id, 10)+`"]}`)
			if r := bearer("GET", "/apis/cms/v1/auth/account", "", changed.Token.Token); r.code != http.StatusUnauthorized {
				t.Errorf("the account of a deleted user = %d %s, want 401", r.code, r.body)
			}
		})
	}
}

// wantAuthenticated checks that every group accepts the token over HTTP
// and gRPC as a user's: whatever the grants answer, not 401 or
// Unauthenticated (wantEverywhere's requests need a read grant on branch 4).
func (s tokenSystem) wantAuthenticated(t *testing.T, what, token string) {
	t.Helper()
	for i, g := range tokenGroups {
		if r, code := s.bearer(t, i, token), s.bearerGRPC(t, i, token); r.code == http.StatusUnauthorized || code == codes.Unauthenticated {
			t.Errorf("%s: %s %s = %d (gRPC %s), want authenticated: %s", what, g.method, g.path, r.code, code, r.body)
		}
	}
}

// TestAccountOperationsMatchTheServedDocument validates the own account's
// requests and answers (success and refusals) against the served
// Management OpenAPI document.
func TestAccountOperationsMatchTheServedDocument(t *testing.T) {
	base, _ := edgeServer(t, nil)
	mgmt := loadServedDoc(t, "Management")
	admin := httpClient{t, base, "admin", "test-password"}
	admin.create(obj(110, "", v(1100, 0, "fiona"), v(1000, 201, "Fiona"), v(1101, 0, "fiona-pw"), v(1104, 0, 4, 0)))
	fiona := httpClient{t, base, "fiona", "fiona-pw"}
	r := fiona.must(http.StatusOK, "GET", "/apis/cms/v1/auth/account", "")
	mgmt.check(t, "GET", "/apis/cms/v1/auth/account", "", r)
	wrong := `{"currentPassword":"nope","newPassword":"fiona-pw2"}`
	r = fiona.must(http.StatusBadRequest, "POST", "/apis/cms/v1/auth/password", wrong)
	mgmt.check(t, "POST", "/apis/cms/v1/auth/password", wrong, r)
	body := `{"currentPassword":"fiona-pw","newPassword":"fiona-pw2"}`
	r = fiona.must(http.StatusOK, "POST", "/apis/cms/v1/auth/password", body)
	mgmt.check(t, "POST", "/apis/cms/v1/auth/password", body, r)
	r = fiona.must(http.StatusUnauthorized, "GET", "/apis/cms/v1/auth/account", "")
	mgmt.check(t, "GET", "/apis/cms/v1/auth/account", "", r)
}
