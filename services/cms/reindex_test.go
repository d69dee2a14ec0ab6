package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestReindexCommand runs `cms reindex` and `cms reindex --branch 4` on an
// embedded data dir and checks the alias, the documents and the output.
func TestReindexCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	name, _ := json.Marshal("Reindexed language")
	_, ids, err := content.New(st, nil).CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: name}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		root := newRootCommand()
		root.SetArgs(append([]string{"reindex", "--data-dir", dir, "--log-level", "error"}, args...))
		root.SetOut(&out)
		root.SetErr(&errOut)
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("cms reindex %v: %v\nstderr: %s", args, err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, progress := run()
	if !strings.Contains(out, "alias objects switched") {
		t.Errorf("stdout = %q", out)
	}
	if !strings.Contains(progress, "reindex [") || !strings.Contains(progress, "docs/s") || !strings.Contains(progress, "ETA 0s") {
		t.Errorf("progress on stderr = %q", progress)
	}
	out, _ = run("--branch", "4")
	if !strings.Contains(out, "reindexed branch 4") {
		t.Errorf("stdout of --branch = %q", out)
	}

	eng, err := bleve.New(filepath.Join(dir, "bleve"))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	target, err := eng.ResolveAlias(ctx, indexdoc.ObjectsIndex)
	if err != nil || !strings.HasPrefix(target, indexdoc.ObjectsIndex+"-") {
		t.Fatalf("alias objects → %q, %v", target, err)
	}
	d, err := eng.Get(ctx, indexdoc.ObjectsIndex, indexdoc.DocID(content.BranchDefault, ids[0]))
	if err != nil {
		t.Fatalf("reindexed object: %v", err)
	}
	if got := d.Fields[indexdoc.NameField(content.LanguageEnUS)]; got != "Reindexed language" {
		t.Errorf("name = %v", got)
	}
	if n, err := eng.Count(ctx, indexdoc.ObjectsIndex, search.Term{Field: indexdoc.FieldBranch, Value: content.BranchDefault}); err != nil || n < 10 {
		t.Errorf("documents on branch 4 = %d, %v", n, err)
	}
}

func TestProgressLine(t *testing.T) {
	b := &progressBar{label: "reindex"}
	got := b.line(indexwriter.Progress{Done: 50, Total: 100}, 10*time.Second)
	want := "reindex [###############...............] 50/100  50.0% 5 docs/s ETA 10s"
	if got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &progressBar{w: &buf, label: "x", start: now, now: func() time.Time { return now }, plainEvery: time.Second}
	p.update(indexwriter.Progress{Done: 1, Total: 4}, false)
	p.update(indexwriter.Progress{Done: 2, Total: 4}, false) // within a second: dropped
	now = now.Add(2 * time.Second)
	p.update(indexwriter.Progress{Done: 4, Total: 4}, true)
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "4/4 100.0%") {
		t.Errorf("plain output = %q", buf.String())
	}
}

// TestReindexRefusesLockedDataDir: a data dir whose Bleve index is open
// elsewhere (a running `cms run`) makes reindex fail instead of hang.
func TestReindexRefusesLockedDataDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng, err := bleve.New(filepath.Join(dir, "bleve"))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.EnsureIndex(ctx, indexdoc.ObjectsIndex, indexdoc.Mapping(indexdoc.DefaultLanguages)); err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"reindex", "--data-dir", dir, "--log-level", "error"})
	start := time.Now()
	err = root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("reindex on a locked data dir: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}
