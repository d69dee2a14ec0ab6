package jobs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/jobs"
)

// TestInputTokenBoundToItsStarter: a job input token works only for the
// user who started the input; to anyone else it is an unknown token
// (append, import into a job) and a cancel removes nothing.
func TestInputTokenBoundToItsStarter(t *testing.T) {
	e := embedded(t)
	alice := auth.WithPrincipal(bg, auth.Principal{Name: "alice"})
	mallory := auth.WithPrincipal(bg, auth.Principal{Name: "mallory"})
	token, _, err := e.svc.StartInput(alice, strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ContinueInput(mallory, token, strings.NewReader("evil")); !errors.Is(err, jobs.ErrInvalid) ||
		!strings.Contains(err.Error(), "no job input") {
		t.Errorf("another user appends: %v, want the unknown-token error", err)
	}
	if err := e.svc.CancelInput(mallory, token); err != nil {
		t.Errorf("another user cancels: %v, want nothing done and no error", err)
	}
	if size, err := e.svc.ContinueInput(alice, token, strings.NewReader("d")); err != nil || size != 4 {
		t.Fatalf("the starter appends after the others tried: %d %v, want 4 bytes", size, err)
	}
	if err := e.svc.CancelInput(alice, token); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ContinueInput(alice, token, strings.NewReader("x")); !errors.Is(err, jobs.ErrInvalid) {
		t.Errorf("after the starter's cancel: %v", err)
	}
}
