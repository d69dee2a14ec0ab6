package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestIndexerParkedAndRetryCommands parks a change event in an embedded
// data dir (as the indexer does), then `cms indexer parked`, run as its
// own process would, lists it from the durable parked list, `cms indexer
// retry` applies it (the object is indexed) and empties the list.
func TestIndexerParkedAndRetryCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	name, _ := json.Marshal("Parked language")
	tr, ids, err := content.New(st, nil).CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{
		{TypeID: content.TypeLanguage, Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: name}}}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := bleve.New(filepath.Join(dir, "bleve"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexwriter.New(st, eng, indexwriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := changes.Encode(changes.Event{Branch: content.BranchDefault, Transaction: tr.ID, ObjectIDs: ids, Kind: changes.KindCreated})
	if _, err := ix.Park(ctx, indexdoc.ParkedEvent{Sequence: 7, Subject: "cms.changes.4", MsgID: "msg-7",
		Deliveries: 5, Err: "bulk rejected: poisoned", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		root := newRootCommand()
		root.SetArgs(append(append([]string{"indexer"}, args...), "--data-dir", dir, "--log-level", "error"))
		root.SetOut(&out)
		root.SetErr(&errOut)
		err := root.ExecuteContext(ctx)
		return out.String(), err
	}
	txs := strconv.FormatInt(tr.ID, 10)
	out, err := run("parked")
	if err != nil || !strings.Contains(out, "1 parked change events") || !strings.Contains(out, "tx "+txs+"\tseq 7") ||
		!strings.Contains(out, "msgId msg-7") || !strings.Contains(out, "poisoned") {
		t.Fatalf("cms indexer parked = %q, %v", out, err)
	}
	if out, err := run("retry", "--tx", strconv.FormatInt(tr.ID+1000, 10)); err == nil || !strings.Contains(err.Error(), "not parked") {
		t.Fatalf("cms indexer retry of a transaction that is not parked = %q, %v", out, err)
	}
	if out, err := run("retry"); err != nil || !strings.Contains(out, "applied tx "+txs+" (seq 7)") {
		t.Fatalf("cms indexer retry = %q, %v", out, err)
	}
	if out, err := run("parked"); err != nil || !strings.Contains(out, "no parked change events") {
		t.Fatalf("cms indexer parked after the retry = %q, %v", out, err)
	}

	eng, err = bleve.New(filepath.Join(dir, "bleve"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Get(ctx, indexdoc.ObjectsIndex, indexdoc.DocID(content.BranchDefault, ids[0])); err != nil {
		t.Fatalf("the retried object is not indexed: %v", err)
	}

	// A full `cms reindex` includes every parked transaction up to its
	// version: it empties the list.
	if st, err = sqlite.Open(ctx, filepath.Join(dir, "cms.db")); err != nil {
		t.Fatal(err)
	}
	if ix, err = indexwriter.New(st, eng, indexwriter.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Park(ctx, indexdoc.ParkedEvent{Sequence: 8, Err: "again", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	_ = eng.Close()
	_ = st.Close()
	if out, err := run("parked"); err != nil || !strings.Contains(out, "tx "+txs+"\tseq 8") {
		t.Fatalf("cms indexer parked = %q, %v", out, err)
	}
	var rout bytes.Buffer
	root := newRootCommand()
	root.SetArgs([]string{"reindex", "--data-dir", dir, "--log-level", "error"})
	root.SetOut(&rout)
	root.SetErr(&rout)
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("cms reindex: %v: %s", err, rout.String())
	}
	if out, err := run("parked"); err != nil || !strings.Contains(out, "no parked change events") {
		t.Fatalf("cms indexer parked after cms reindex = %q, %v", out, err)
	}
}
