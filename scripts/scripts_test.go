// Package scripts holds the helper scripts of the Makefile and CI; its
// tests check the ones whose output people read.
package scripts

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVetProgress: the filter of `make test` turns `go vet -v` into one
// progress line per package of this module, drops the names of other
// packages and keeps every finding.
func TestVetProgress(t *testing.T) {
	in := strings.Join([]string{
		"internal/goarch",
		"github.com/spf13/cobra",
		"github.com/cmsplatform/cms/pkg/params",
		"# github.com/cmsplatform/cms/pkg/params",
		"pkg/params/params.go:12:3: fmt.Printf format %d has arg x of wrong type string",
		"github.com/cmsplatform/cms/pkg/params_test",
	}, "\n") + "\n"
	cmd := exec.Command("awk", "-f", "vet-progress.awk")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"vet: github.com/cmsplatform/cms/pkg/params",
		"# github.com/cmsplatform/cms/pkg/params",
		"pkg/params/params.go:12:3: fmt.Printf format %d has arg x of wrong type string",
		"vet: github.com/cmsplatform/cms/pkg/params_test",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
