// Package docs holds the project's own reference documents; its test keeps
// them complete and the repository self-contained.
package docs

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// outsideReferences are spellings of documents that live outside the
// repository (a sibling checkout a clone does not have). Built from parts
// so that this file does not match itself.
var outsideReferences = []string{
	"../" + "shared", "shared/" + "novadb", "shared/" + "spec", "/work/" + "shared",
	"CONVENTIONS" + ".md", "interfaces" + ".md", "STYLE" + ".md",
}

// TestNoFilePointsOutsideTheRepository: no tracked file cites a document
// outside the repository; the facts it relies on are in docs/.
func TestNoFilePointsOutsideTheRepository(t *testing.T) {
	files := repositoryFiles(t)
	if len(files) < 100 {
		t.Fatalf("only %d tracked files: not the repository root?", len(files))
	}
	for _, f := range files {
		if f == "go.sum" || strings.HasSuffix(f, "/go.sum") || f == "go.work.sum" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree
			}
			t.Fatal(err)
		}
		for _, ref := range outsideReferences {
			if strings.Contains(string(b), ref) {
				t.Errorf("%s mentions %q, a document outside the repository: point to docs/ instead", f, ref)
			}
		}
	}
}

// TestReferenceNamesEveryOperation: docs/api-reference.md names the
// operation id of every RPC of the four groups, and the README links it.
func TestReferenceNamesEveryOperation(t *testing.T) {
	ref, err := os.ReadFile("api-reference.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "cms.") {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			ms := fd.Services().Get(i).Methods()
			for j := 0; j < ms.Len(); j++ {
				op := proto.GetExtension(ms.Get(j).Options(), optionsv1.E_OperationId).(string)
				n++
				if !strings.Contains(string(ref), "| "+op+" |") {
					t.Errorf("api-reference.md does not list operation %s (%s)", op, ms.Get(j).FullName())
				}
			}
		}
		return true
	})
	if n != 90 { // NovaDB's 75 and ours: Webhook_GetWebhookDeliveries, Webhook_SendTestDelivery, Delivery_WatchChanges, Auth_IssueToken, Auth_RenewToken, Auth_Logout, Cms_GetObjectHistory, Cms_RevertObject, Cms_RevertObjects, Auth_GetAccount, Auth_ChangePassword, Cms_GetBranchDiff, Cms_PromoteBranch, Cms_RevertTransaction, Cms_ScheduleRelease
		t.Errorf("%d operations registered, want 90", n)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/api-reference.md)") {
		t.Error("README.md does not link docs/api-reference.md")
	}
}

// repositoryFiles lists the tracked files (git ls-files), or every file
// under the repository root but build output and data when git or its
// metadata is missing (an exported source tree).
func repositoryFiles(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output(); err == nil {
		return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	}
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "data", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
