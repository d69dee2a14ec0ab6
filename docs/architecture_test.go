package docs

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// update rewrites the generated package graph in architecture.md:
// go test ./docs -run TestArchitectureGraph -update
var update = flag.Bool("update", false, "rewrite the package graph in docs/architecture.md")

const module = "github.com/cmsplatform/cms/"

// The generated part of architecture.md lies between these lines.
const (
	graphBegin = "<!-- graph: generated from the imports by `go test ./docs -run TestArchitectureGraph -update` -->\n"
	graphEnd   = "<!-- end of graph -->\n"
)

// The README's package table lies between these lines.
const (
	tableBegin = "<!-- packages: one row per directory of pkg/ and services/, checked by docs TestREADMEListsEveryPackage -->\n"
	tableEnd   = "<!-- end of packages -->\n"
)

// packageImports returns every package directory under pkg/ and services/
// (relative to the repository root) with the packages of pkg/ and
// services/ its non-test files import.
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, root := range []string{"pkg", "services"} {
		err := filepath.WalkDir(filepath.Join("..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			dir := filepath.ToSlash(strings.TrimPrefix(filepath.Dir(path), ".."+string(filepath.Separator)))
			if strings.Contains(dir, "testdata") {
				return nil
			}
			if _, ok := out[dir]; !ok {
				out[dir] = nil
			}
			if strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				p, ok := strings.CutPrefix(p, module)
				if ok && (strings.HasPrefix(p, "pkg/") || strings.HasPrefix(p, "services/")) && !slices.Contains(out[dir], p) {
					out[dir] = append(out[dir], p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, imps := range out {
		slices.Sort(imps)
	}
	return out
}

// graph renders the imports as one line per package.
func graph(imports map[string][]string) string {
	var b strings.Builder
	for _, dir := range slices.Sorted(maps.Keys(imports)) {
		imps := imports[dir]
		if len(imps) == 0 {
			fmt.Fprintf(&b, "- `%s` (none)\n", dir)
			continue
		}
		fmt.Fprintf(&b, "- `%s` → %s\n", dir, "`"+strings.Join(imps, "`, `")+"`")
	}
	return b.String()
}

// TestArchitectureGraph: architecture.md shows the package graph as the
// code has it, and the layering holds: pkg/ never imports services/.
func TestArchitectureGraph(t *testing.T) {
	imports := packageImports(t)
	for dir, imps := range imports {
		for _, p := range imps {
			if strings.HasPrefix(dir, "pkg/") && strings.HasPrefix(p, "services/") {
				t.Errorf("%s imports %s: domain packages must not depend on transport", dir, p)
			}
		}
	}
	testenv.Generated(t, "architecture.md", graphBegin, graphEnd, graph(imports), *update,
		"go test ./docs -run TestArchitectureGraph -update")
}

// TestREADMEListsEveryPackage: the README's package table has one row per
// package directory of pkg/ and services/, and no row for one that is gone.
func TestREADMEListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for line := range strings.Lines(testenv.Section(t, string(b), tableBegin, tableEnd)) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		if dir := strings.Trim(strings.TrimSpace(cells[1]), "`"); strings.HasPrefix(dir, "pkg/") || strings.HasPrefix(dir, "services/") {
			if strings.TrimSpace(cells[2]) == "" {
				t.Errorf("README: %s has no purpose", dir)
			}
			listed[dir] = true
		}
	}
	for dir := range packageImports(t) {
		if !listed[dir] {
			t.Errorf("README's package table lacks %s", dir)
		}
		delete(listed, dir)
	}
	for dir := range listed {
		t.Errorf("README's package table lists %s, which has no Go files", dir)
	}
}
