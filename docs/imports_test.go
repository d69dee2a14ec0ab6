package docs

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// The import rules of architecture.md ("Import rules"), checked on the
// imports of non-test files (packageImports). Test files may use any
// implementation as a fixture.

// readRoots are the transports of the groups that read the index and the
// Management view but never write them: Delivery, Index and Rendering.
// Nothing they import, directly or through other packages, is a writer.
var readRoots = []string{"services/delivery", "services/index", "services/rendering"}

// writers write the index or the change feed: the index writer, the
// indexer target, the outbox relay, Management's write transport.
var writers = map[string]string{
	"pkg/indexwriter":     "writes the search index",
	"services/indexer":    "the indexer target (feeds pkg/indexwriter)",
	"pkg/outbox":          "relays committed change events to the bus",
	"services/management": "Management's transport: every write of objects, jobs and files",
}

// components are the component interfaces; each package below one (at any
// depth) is an implementation, unless its name ends in "test" (the
// conformance suite).
var components = []string{"pkg/blobs", "pkg/cache", "pkg/events", "pkg/search", "pkg/store"}

// wiring are the packages that pick implementations: the process assembly
// and the binary.
var wiring = []string{"services/internal/app", "services/cms"}

// fixtures are test-support packages that set up real implementations;
// only tests and other fixtures may import them.
var fixtures = []string{"pkg/delivery/deliverytest", "pkg/testenv/setups"}

// implementationExceptions are imports of an implementation outside the
// wiring, each with its reason.
var implementationExceptions = map[string]string{}

// implementations are the implementation packages among dirs.
func implementations(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		for _, c := range components {
			if strings.HasPrefix(d, c+"/") && !strings.HasSuffix(path.Base(d), "test") {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// componentOf is the component interface a package belongs to, or "".
func componentOf(dir string) string {
	for _, c := range components {
		if dir == c || strings.HasPrefix(dir, c+"/") {
			return c
		}
	}
	return ""
}

// readers are the packages the read roots import, directly or not.
func readers(imports map[string][]string) []string {
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		for _, imp := range imports[dir] {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	for _, r := range readRoots {
		walk(r)
	}
	return slices.Sorted(maps.Keys(seen))
}

// readerViolations: every chain of imports from a read root to a writer.
func readerViolations(imports map[string][]string) []string {
	var out []string
	for _, root := range readRoots {
		// Breadth first, so each package is reached by a shortest chain.
		via := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			dir := queue[0]
			queue = queue[1:]
			if _, ok := writers[dir]; ok {
				chain := []string{dir}
				for p := via[dir]; p != ""; p = via[p] {
					chain = append(chain, p)
				}
				slices.Reverse(chain)
				out = append(out, fmt.Sprintf("%s reaches the writer %s (%s): %s", root, dir, writers[dir],
					strings.Join(chain, " → ")))
				continue
			}
			for _, imp := range imports[dir] {
				if _, seen := via[imp]; !seen {
					via[imp] = dir
					queue = append(queue, imp)
				}
			}
		}
	}
	return out
}

// implementationViolations: every import of an implementation by a
// package that is neither the wiring, nor of the same component, nor a
// fixture, nor a listed exception; and every import of a fixture by a
// package that is not a fixture.
func implementationViolations(imports map[string][]string) []string {
	impls := implementations(slices.Collect(maps.Keys(imports)))
	var out []string
	for _, dir := range slices.Sorted(maps.Keys(imports)) {
		for _, imp := range imports[dir] {
			switch {
			case slices.Contains(fixtures, imp) && !slices.Contains(fixtures, dir):
				out = append(out, fmt.Sprintf("%s imports the test fixture %s: only tests may", dir, imp))
			case !slices.Contains(impls, imp), slices.Contains(wiring, dir), slices.Contains(fixtures, dir),
				componentOf(dir) == componentOf(imp):
			case implementationExceptions[dir+" → "+imp] != "":
			default:
				out = append(out, fmt.Sprintf("%s imports the implementation %s: only %s pick implementations; "+
					"take the interface %s", dir, imp, strings.Join(wiring, " and "), componentOf(imp)))
			}
		}
	}
	return out
}

// The generated list of the rules' packages in architecture.md.
const (
	rulesBegin = "<!-- import rules: generated from docs/imports_test.go by `go test ./docs -run TestImportRules -update` -->\n"
	rulesEnd   = "<!-- end of import rules -->\n"
)

// rulesText renders the packages each rule names, so the page shows
// exactly what the test enforces.
func rulesText(imports map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Read roots: `%s`.\n", strings.Join(readRoots, "`, `"))
	fmt.Fprintf(&b, "- Readers (what the read roots import, directly or not): `%s`.\n", strings.Join(readers(imports), "`, `"))
	b.WriteString("- Writers:\n")
	for _, w := range slices.Sorted(maps.Keys(writers)) {
		fmt.Fprintf(&b, "  - `%s`: %s\n", w, writers[w])
	}
	fmt.Fprintf(&b, "- Component interfaces: `%s`.\n", strings.Join(components, "`, `"))
	fmt.Fprintf(&b, "- Implementations: `%s`.\n", strings.Join(implementations(slices.Collect(maps.Keys(imports))), "`, `"))
	fmt.Fprintf(&b, "- Wiring: `%s`.\n", strings.Join(wiring, "`, `"))
	fmt.Fprintf(&b, "- Test fixtures: `%s`.\n", strings.Join(fixtures, "`, `"))
	if len(implementationExceptions) == 0 {
		b.WriteString("- Exceptions: none.\n")
	} else {
		b.WriteString("- Exceptions:\n")
	}
	for _, e := range slices.Sorted(maps.Keys(implementationExceptions)) {
		fmt.Fprintf(&b, "  - `%s`: %s.\n", strings.ReplaceAll(e, " → ", "` → `"), implementationExceptions[e])
	}
	return b.String()
}

// TestImportRules: readers never import the writer, and only the wiring
// imports implementations (architecture.md, "Import rules"). Every package
// the rules name exists, so a rename cannot switch a rule off.
func TestImportRules(t *testing.T) {
	imports := packageImports(t)
	named := slices.Concat(readRoots, slices.Collect(maps.Keys(writers)), components, wiring, fixtures)
	for e := range implementationExceptions {
		from, to, _ := strings.Cut(e, " → ")
		named = append(named, from, to)
		if !slices.Contains(imports[from], to) {
			t.Errorf("exception %q: %s no longer imports %s; remove the exception", e, from, to)
		}
	}
	for _, dir := range named {
		if _, ok := imports[dir]; !ok {
			t.Errorf("the import rules name %s, which has no Go files", dir)
		}
	}
	for _, v := range readerViolations(imports) {
		t.Error(v)
	}
	for _, v := range implementationViolations(imports) {
		t.Error(v)
	}
	testenv.Generated(t, "architecture.md", rulesBegin, rulesEnd, rulesText(imports), *update,
		"go test ./docs -run TestImportRules -update")
}

// TestImportRulesCatchViolations: the checks report the imports the rules
// forbid, on the real graph with one import added, and nothing more.
func TestImportRulesCatchViolations(t *testing.T) {
	for _, c := range []struct {
		from, to, want string
	}{
		{"pkg/delivery", "pkg/indexwriter", "services/delivery reaches the writer pkg/indexwriter"},
		{"pkg/indexquery", "pkg/jobs", "services/index → pkg/indexquery → pkg/jobs → pkg/indexwriter"},
		{"pkg/templates", "pkg/outbox", "services/rendering reaches the writer pkg/outbox"},
		{"services/delivery", "services/management", "reaches the writer services/management"},
		{"pkg/indexquery", "pkg/search/bleve", "pkg/indexquery imports the implementation pkg/search/bleve"},
		{"pkg/rendercache", "pkg/cache/redis", "pkg/rendercache imports the implementation pkg/cache/redis"},
		{"services/delivery", "pkg/store/sqlstore", "services/delivery imports the implementation pkg/store/sqlstore"},
		{"pkg/content", "pkg/testenv/setups", "pkg/content imports the test fixture pkg/testenv/setups"},
	} {
		imports := packageImports(t)
		imports[c.from] = append(imports[c.from], c.to)
		v := slices.Concat(readerViolations(imports), implementationViolations(imports))
		if len(v) == 0 || !strings.Contains(strings.Join(v, "\n"), c.want) {
			t.Errorf("%s importing %s: got %q, want a violation saying %q", c.from, c.to, v, c.want)
		}
	}
}
