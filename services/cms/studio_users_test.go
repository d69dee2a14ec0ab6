package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func init() {
	addStudioJourney("users", studioUsersJourney)
}

// studioUsersJourney: the Users and Account screens. The administrator
// creates Dora with a read grant on one of two new branches; Dora signs in
// in a browser context of her own and sees only that branch, no Users
// section, the API's refusal when she opens the Users screen by its
// address, and her grant on her Account screen; she changes her own
// password (the studio keeps her signed in with the answered token, the
// old password no longer signs in). The administrator disables her: her
// next request is refused and the studio says so on its login.
func studioUsersJourney(t *testing.T, s *studioSetup) {
	teamA := createBranch(t, s.base, "Users team A")
	createBranch(t, s.base, "Users team B")

	admin := s.page(t, "admin")
	admin.login()
	admin.waitFor("the account is read (the Users section shows)", `!!`+string(button("Users")))
	admin.click("Users")
	admin.waitText("Choose a user to change its rights")
	admin.click("New user")
	admin.fill("User name", "dora")
	admin.fill("Display name", "Dora Klein")
	admin.fill("Password", "dora-password-1")
	admin.fill("Repeat the password", "dora-password-1")
	admin.choose("Access to Users team A", "read")
	admin.shot("new-user")
	admin.checkAccessibility("the new user dialog")
	admin.click("Create user")
	admin.waitFor("Dora's rights are shown", `document.querySelector(".pane-title")?.textContent === "dora"`)
	admin.waitFor("the grant is stored", fmt.Sprintf(`document.getElementById("user-"+location.pathname.split("/").pop()+"-branch-%d")?.value === "read"`, teamA))
	admin.shot("user-created")
	admin.checkAccessibility("the Users screen")
	dora := userNamed(t, s.base, "dora")
	if dora.read != fmt.Sprint(teamA) || dora.write != "" || dora.admin {
		t.Errorf("the user as stored: %+v, want read %d only", dora, teamA)
	}

	// Dora sees only her branch, and no Users section.
	other := s.page(t, "dora")
	other.signInAs("dora", "dora-password-1")
	other.waitFor("only team A in the branch picker", `[...document.querySelectorAll(".topbar select[aria-label=Branch] option")].map(o => o.textContent.trim()).join("|") === "Users team A"`)
	other.waitFor("the account is read", `!!document.querySelector(".topbar a.user")`)
	if studioEval[bool](other, `!![...document.querySelectorAll(".sections button")].find(b => b.textContent.trim() === "Users")`) {
		t.Error("a user who is no administrator is offered the Users section")
	}
	other.shot("only-her-branch")
	// By its address the Users screen shows the API's refusal.
	other.open("/studio/users")
	other.waitText("You have no permission for this.")
	other.waitText(`has no read permission on branch 4`)
	other.shot("users-refused")
	// Her account: her grant, from the branch tree.
	other.click("My account: dora")
	other.waitFor("the grant is listed", fmt.Sprintf(`document.querySelector(".account-grants tr[data-branch='%d']")?.innerText.includes("Read")`, teamA))
	other.shot("account")
	other.checkAccessibility("the Account screen")

	// She changes her own password; a wrong current one is refused first.
	other.fill("Current password", "not-my-password")
	other.fill("New password", "dora-password-2")
	other.fill("Repeat the password", "dora-password-2")
	other.click("Change password")
	other.waitText("the current password is wrong")
	other.fill("Current password", "dora-password-1")
	other.click("Change password")
	other.waitText("Your password was changed.")
	other.shot("password-changed")
	// Still signed in with the answered token, after a reload too.
	other.open("/studio/account")
	other.waitFor("still signed in", fmt.Sprintf(`!!document.querySelector(".account-grants tr[data-branch='%d']")`, teamA))
	for pw, want := range map[string]int{"dora-password-1": http.StatusUnauthorized, "dora-password-2": http.StatusOK} {
		code, b, err := call(http.DefaultClient, http.MethodPost, s.base+"/apis/cms/v1/auth/token", fmt.Sprintf(`{"user":"dora","password":%q}`, pw), "Authorization", "")
		if err != nil || code != want {
			t.Errorf("sign in with %s after the change = %d %v %s, want %d", pw, code, err, b, want)
		}
	}

	// The administrator disables her.
	admin.click("Disable…")
	admin.waitText("can no longer sign in")
	admin.shot("disable-dialog")
	admin.click("Disable")
	admin.waitText("dora is disabled.")
	admin.waitFor("the user shows as disabled", `document.querySelector(".user-link.active")?.classList.contains("user-disabled") === true`)
	admin.shot("user-disabled")
	// Her next request is refused; the studio says so.
	other.click("Content")
	other.waitText("You were signed out: the server refused your session")
	other.shot("refused-after-disable")
	other.checkAccessibility("the login after the refusal")
	if code, b, _ := call(http.DefaultClient, http.MethodPost, s.base+"/apis/cms/v1/auth/token", `{"user":"dora","password":"dora-password-2"}`, "Authorization", ""); code != http.StatusUnauthorized {
		t.Errorf("a disabled user signs in: %d %s", code, b)
	}
	// Enabled again, she may sign in.
	admin.click("Enable")
	admin.waitText("dora is enabled again.")
	other.fillSignIn("dora", "dora-password-2")
}

// choose picks an option of the select with this accessible name.
func (p *studioPage) choose(label, value string) {
	p.t.Helper()
	q, _ := json.Marshal(label)
	v, _ := json.Marshal(value)
	p.waitFor("choose "+label, fmt.Sprintf(`(() => { const el = %s; if (!el) return false; el.value = %s; el.dispatchEvent(new Event("change", {bubbles: true})); return el.value === %s; })()`,
		labelled(strings.Trim(string(q), `"`)), v, v))
}

// storedUser is a user object's security values as an administrator reads them.
type storedUser struct {
	read, write string
	admin       bool
}

// userNamed reads the live user with this user name through Management.
func userNamed(t *testing.T, base, name string) storedUser {
	t.Helper()
	var list struct {
		Objects []struct {
			Values []struct {
				Attribute int64 `json:"attribute"`
				Value     any   `json:"value"`
			} `json:"values"`
		} `json:"objects"`
	}
	b := mustCall(t, http.StatusOK, http.MethodGet, base+"/apis/cms/v1/branches/4/types/110/objects?take=1000&deleted=false", "")
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Objects {
		var u storedUser
		found := false
		var read, write []string
		for _, v := range o.Values {
			switch v.Attribute {
			case 1100:
				found = v.Value == name
			case 1102:
				u.admin = v.Value == true
			case 1104:
				read = append(read, fmt.Sprint(v.Value))
			case 1105:
				write = append(write, fmt.Sprint(v.Value))
			}
		}
		if found {
			u.read, u.write = strings.Join(read, ","), strings.Join(write, ",")
			return u
		}
	}
	t.Fatalf("no user %q in %s", name, b)
	return storedUser{}
}
