// Package codegentest helps tests of the code generator: it compiles
// generated code with the real compilers (CompileCSharp, CompileTypeScript)
// and seeds a content model with every data type and awkward names (Seed).
package codegentest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// Each helper compiles all files of one test in a single compiler run (the
// compilers start slowly; CI has two cores). Without a compiler the test
// skips locally and fails under CI (testenv.Tool).

// CompileCSharp compiles the C# files (name → source) into a library,
// warnings as errors.
func CompileCSharp(t testing.TB, files map[string]string) {
	t.Helper()
	mcs := testenv.Tool(t, testenv.MCS)
	dir := t.TempDir()
	args := []string{"-target:library", "-warnaserror+", "-nologo", "-out:" + filepath.Join(dir, "out.dll")}
	args = append(args, writeFiles(t, dir, files)...)
	run(t, dir, mcs, args...)
}

// CompileTypeScript type-checks the TypeScript files with tsc --strict.
func CompileTypeScript(t testing.TB, files map[string]string) {
	t.Helper()
	tsc := testenv.Tool(t, testenv.TSC)
	dir := t.TempDir()
	args := []string{"--strict", "--noEmit", "--pretty", "false", "--target", "es2020", "--module", "es2020", "--lib", "es2020", "--skipLibCheck",
		"--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess"}
	args = append(args, writeFiles(t, dir, files)...)
	run(t, dir, tsc, args...)
}

func writeFiles(t testing.TB, dir string, files map[string]string) []string {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
		if err := os.WriteFile(paths[i], []byte(files[n]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s failed: %v\n%s", filepath.Base(name), err, strings.TrimSpace(string(out)))
	}
}
