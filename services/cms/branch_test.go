package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
	"github.com/cmsplatform/cms/services/internal/app"
)

const branchTestPassword = "branch-password"

// startBranchServer runs a configured system in-process until the test
// ends and answers its HTTP root.
func startBranchServer(t *testing.T, cfg app.Config) string {
	t.Helper()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = branchTestPassword
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	})
	<-srv.Ready()
	return "http://" + srv.HTTPAddr()
}

// embeddedBranchServer is `cms run` on SQLite in a fresh directory.
func embeddedBranchServer(t *testing.T) string {
	cfg := app.DefaultConfig()
	cfg.DataDir = t.TempDir()
	return startBranchServer(t, cfg)
}

// postgresBranchServer is the Management target of `cms serve` on a fresh
// PostgreSQL database, with its stream and blob bucket in a NATS namespace
// of its own (skipped locally without CMS_POSTGRES_URL and CMS_NATS_URL).
func postgresBranchServer(t *testing.T) string {
	cfg := app.DistributedConfig()
	cfg.DrainDelay = 0
	cfg.Target = app.TargetManagement
	cfg.Store.URL = testenv.PostgresDatabase(t)
	cfg.Events.URL = testenv.URL(t, testenv.NATSURL)
	_, prefix := setups.NATSBus(t, "branchfiles", "branchfiles-test")
	cfg.Events.Prefix, cfg.Blobs.Prefix = prefix, prefix
	cfg.DataDir = t.TempDir()
	return startBranchServer(t, cfg)
}

// branchAPI calls the Management API of base as the administrator.
type branchAPI struct {
	t    *testing.T
	base string
}

func (a branchAPI) call(method, path, body string, out any) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.base+"/apis/cms/v1"+path, strings.NewReader(body))
	req.SetBasicAuth("admin", branchTestPassword)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		a.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
}

type branchWrite struct {
	Transaction struct {
		ID int64 `json:"id"`
	} `json:"transaction"`
	CreatedObjectIDs []int64 `json:"createdObjectIds"`
}

func (a branchAPI) create(objects string) branchWrite {
	a.t.Helper()
	var w branchWrite
	a.call(http.MethodPost, "/branches/4/objects", `{"comment":"seed","objects":[`+objects+`]}`, &w)
	return w
}

// upload stores content with extension ext and answers its GUID.
func (a branchAPI) upload(ext string, content []byte) string {
	a.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("Extension", ext)
	_ = mw.WriteField("Commit", "true")
	fw, _ := mw.CreateFormFile("File", "f")
	_, _ = fw.Write(content)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.base+"/apis/cms/v1/fileUpload", &body)
	req.SetBasicAuth("admin", branchTestPassword)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		GUID string `json:"guid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || res.GUID == "" {
		a.t.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	return res.GUID
}

// probe writes one object and answers its transaction: with the probe
// before, the ids say how many transactions were written in between.
func (a branchAPI) probe(typ int64) int64 {
	a.t.Helper()
	return a.create(fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[]}`, typ)).Transaction.ID
}

func val(attr, lang int64, value any) string {
	b, _ := json.Marshal(value)
	return fmt.Sprintf(`{"attribute":%d,"language":%d,"variant":0,"value":%s}`, attr, lang, b)
}

// seedBranchModel writes a model and content with references between
// objects (single and multi-valued, forward and back), a localized value,
// markup-like text, a number and a binary proxy object with its file.
func seedBranchModel(a branchAPI) {
	w := a.create(`{"meta":{"typeRef":0,"apiIdentifier":"article"},"values":[` + val(1000, 201, "Article") + `]},
		{"meta":{"typeRef":0,"apiIdentifier":"image"},"values":[` + val(1000, 201, "Image") + `,` + val(5009, 0, true) + `]},
		{"meta":{"typeRef":10,"apiIdentifier":"title"},"values":[` + val(1001, 0, "String") + `,` + val(1017, 0, true) + `]},
		{"meta":{"typeRef":10,"apiIdentifier":"price"},"values":[` + val(1001, 0, "Decimal") + `]},
		{"meta":{"typeRef":10,"apiIdentifier":"related"},"values":[` + val(1001, 0, "ObjRef") + `,` + val(1004, 0, true) + `]},
		{"meta":{"typeRef":10,"apiIdentifier":"picture"},"values":[` + val(1001, 0, "BinRef") + `]}`)
	article, image, title, price, related, picture := w.CreatedObjectIDs[0], w.CreatedObjectIDs[1], w.CreatedObjectIDs[2],
		w.CreatedObjectIDs[3], w.CreatedObjectIDs[4], w.CreatedObjectIDs[5]
	md5 := a.upload("png", []byte("\x89PNG\r\n\x1a\n not really an image"))
	pic := a.create(fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s,%s]}`, image,
		val(1000, 201, "Logo"), val(11000, 0, md5), val(11005, 0, ".png"))).CreatedObjectIDs[0]
	objs := a.create(fmt.Sprintf(`{"meta":{"typeRef":%d,"apiIdentifier":"home"},"values":[%s,%s,%s,%s,%s]},
		{"meta":{"typeRef":%d},"values":[%s,%s]}`,
		article, val(1000, 201, "Home <b>&</b> \"quoted\""), val(title, 201, "Hello"), val(title, 202, "Hallo"),
		val(price, 0, 12.5), val(picture, 0, pic),
		article, val(1000, 201, "About"), val(title, 201, "About us"))).CreatedObjectIDs
	// References both ways, one of them multi-valued.
	a.call(http.MethodPatch, "/branches/4/objects", fmt.Sprintf(`{"objects":[
		{"meta":{"id":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":%d,"sortReverse":0},{"attribute":%d,"language":0,"variant":0,"value":%d,"sortReverse":1}]},
		{"meta":{"id":%d},"values":[%s]}]}`, objs[0], related, objs[1], related, pic, objs[1], val(related, 0, objs[0])), nil)
}

// runBranch runs `cms branch <args>` against base and answers its output.
func runBranch(t *testing.T, base string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCommand()
	root.SetArgs(append(append([]string{"branch"}, args...), "--url", base, "--password", branchTestPassword))
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("cms branch %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// readTree is every file below dir by its relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails when the trees below a and b differ.
func sameTree(t *testing.T, what string, a, b string) {
	t.Helper()
	ta, tb := readTree(t, a), readTree(t, b)
	for p, ca := range ta {
		if cb, ok := tb[p]; !ok {
			t.Errorf("%s: %s only in the first", what, p)
		} else if ca != cb {
			t.Errorf("%s: %s differs:\n%s\n---\n%s", what, p, ca, cb)
		}
	}
	for p := range tb {
		if _, ok := ta[p]; !ok {
			t.Errorf("%s: %s only in the second", what, p)
		}
	}
}

// TestBranchExportImport: an export is deterministic (twice → the same
// bytes), an import creates the objects with their GUIDs and stored files
// and a second import writes no transaction, and exporting what was
// imported gives the same files: SQLite → SQLite → SQLite, and SQLite →
// PostgreSQL → SQLite on the real components.
func TestBranchExportImport(t *testing.T) {
	for _, setup := range []struct {
		name   string
		middle func(t *testing.T) string
	}{{"embedded", embeddedBranchServer}, {"distributed", postgresBranchServer}} {
		t.Run(setup.name, func(t *testing.T) {
			mid := setup.middle(t) // first: it skips without the components
			midAPI := branchAPI{t, mid}
			src := embeddedBranchServer(t)
			seedBranchModel(branchAPI{t, src})
			dir := t.TempDir()
			first, again := filepath.Join(dir, "first"), filepath.Join(dir, "again")
			out := runBranch(t, src, "export", "--branch", "4", first)
			if !strings.Contains(out, "2 types, 4 attributes, 3 objects, 1 stored files (1 downloaded)") {
				t.Errorf("export: %s", out)
			}
			runBranch(t, src, "export", "--branch", "4", again)
			sameTree(t, "export twice", first, again)
			if out := runBranch(t, src, "export", "--branch", "4", first); !strings.Contains(out, "(0 downloaded)") {
				t.Errorf("export into the same directory downloaded again: %s", out)
			}
			sameTree(t, "export into the same directory", first, again)

			out = runBranch(t, mid, "import", first, "--branch", "4")
			if !strings.Contains(out, "9 created, 0 updated, 0 unchanged, 1 files uploaded") {
				t.Errorf("first import: %s", out)
			}
			// A second import writes no transaction: the probes around it
			// have consecutive transaction ids.
			var probeType branchWrite
			midAPI.call(http.MethodPost, "/branches/4/objects", `{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"probe"},"values":[]}]}`, &probeType)
			before := midAPI.probe(probeType.CreatedObjectIDs[0])
			out = runBranch(t, mid, "import", first, "--branch", "4")
			if after := midAPI.probe(probeType.CreatedObjectIDs[0]); after != before+1 {
				t.Errorf("the second import wrote %d transactions", after-before-1)
			}
			if !strings.Contains(out, "0 created, 0 updated, 9 unchanged, 0 files uploaded, 0 transactions") {
				t.Errorf("second import: %s", out)
			}
			// The middle holds a type of its own (the probes'); delete it so
			// that its export is the source's.
			midAPI.call(http.MethodDelete, "/branches/4/objects", fmt.Sprintf(`{"objectIds":["%d"]}`, probeType.CreatedObjectIDs[0]), nil)
			fromMid := filepath.Join(dir, "mid")
			runBranch(t, mid, "export", "--branch", "4", fromMid)
			sameTree(t, "export of the import", first, fromMid)

			back := embeddedBranchServer(t)
			runBranch(t, back, "import", fromMid, "--branch", "4")
			roundTrip := filepath.Join(dir, "back")
			runBranch(t, back, "export", "--branch", "4", roundTrip)
			sameTree(t, "round trip", first, roundTrip)
		})
	}
}

// importOut runs an import and checks the counts it prints.
func importOut(t *testing.T, base, dir, branch, want string) {
	t.Helper()
	if out := runBranch(t, base, "import", dir, "--branch", branch); !strings.Contains(out, want) {
		t.Errorf("import into branch %s: %s\nwant %q", branch, out, want)
	}
}

// writeObject writes an object file by hand.
func writeObject(t *testing.T, dir, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old by replacement in the one file below dir holding old.
func editFile(t *testing.T, dir, old, replacement string) {
	t.Helper()
	for rel, content := range readTree(t, dir) {
		if strings.Contains(content, old) {
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(strings.Replace(content, old, replacement, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no file holds %q", old)
}

type branchObject struct {
	Meta struct {
		ID      int64  `json:"id"`
		GUID    string `json:"guid"`
		Deleted bool   `json:"deleted"`
	} `json:"meta"`
	Values []struct {
		Attribute int64 `json:"attribute"`
		Language  int64 `json:"language"`
		Value     any   `json:"value"`
	} `json:"values"`
}

// name is the object's English name (attribute 1000), "" without one.
func (o branchObject) name() string {
	for _, v := range o.Values {
		if v.Attribute == 1000 && v.Language == 201 {
			return fmt.Sprint(v.Value)
		}
	}
	return ""
}

// TestBranchImportMatchesAndUpdates: an object the target made itself with
// the same ApiIdentifier is matched (updated, not created again, its GUID
// kept), a deleted one is restored, an edited file changes one object in
// one transaction, a value left out of a file is removed, and on a child
// branch an import changes only the child.
func TestBranchImportMatchesAndUpdates(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { branchImportMatchesAndUpdates(t, embeddedBranchServer) })
	t.Run("distributed", func(t *testing.T) { branchImportMatchesAndUpdates(t, postgresBranchServer) })
}

// branchImportMatchesAndUpdates imports into a system start starts.
func branchImportMatchesAndUpdates(t *testing.T, start func(t *testing.T) string) {
	dst := start(t) // first: it skips without the components
	src := embeddedBranchServer(t)
	seedBranchModel(branchAPI{t, src})
	dir := filepath.Join(t.TempDir(), "site")
	runBranch(t, src, "export", "--branch", "4", dir)

	a := branchAPI{t, dst}
	own := a.create(`{"meta":{"typeRef":0,"apiIdentifier":"article"},"values":[` + val(1000, 201, "Their article") + `]}`)
	var ownType branchObject
	a.call(http.MethodGet, fmt.Sprintf("/branches/4/objects/%d", own.CreatedObjectIDs[0]), "", &ownType)
	importOut(t, dst, dir, "4", "8 created, 1 updated, 0 unchanged")
	var article branchObject
	a.call(http.MethodGet, "/branches/4/objects/article", "", &article)
	if article.Meta.ID != own.CreatedObjectIDs[0] || article.Meta.GUID != ownType.Meta.GUID || article.name() != "Article" {
		t.Errorf("the target's own article type after the import: %+v (want id %d, its GUID, the file's name)", article, own.CreatedObjectIDs[0])
	}
	importOut(t, dst, dir, "4", "0 created, 0 updated, 9 unchanged, 0 files uploaded, 0 transactions")

	// Deleted on the target: restored.
	a.call(http.MethodDelete, "/branches/4/objects", `{"objectIds":["home"]}`, nil)
	importOut(t, dst, dir, "4", "0 created, 1 updated, 8 unchanged, 0 files uploaded, 1 transactions")
	var home branchObject
	a.call(http.MethodGet, "/branches/4/objects/home", "", &home)
	if home.Meta.Deleted {
		t.Error("home is still deleted after the import")
	}

	// A deleted type, its deleted object and a new file of an object of
	// it: the type is restored before the new object is created with it.
	var logo struct {
		Objects []branchObject `json:"objects"`
	}
	a.call(http.MethodGet, "/branches/4/types/image/objects", "", &logo)
	if len(logo.Objects) != 1 {
		t.Fatalf("images on the target: %+v", logo.Objects)
	}
	a.call(http.MethodDelete, "/branches/4/objects", fmt.Sprintf(`{"objectIds":["%d"]}`, logo.Objects[0].Meta.ID), nil)
	a.call(http.MethodDelete, "/branches/4/objects", `{"objectIds":["image"]}`, nil)
	writeObject(t, dir, "objects/image/5f0c0b4e-1d2a-4b7e-9a51-2c43d8e6a001.json",
		`{"guid":"5f0c0b4e-1d2a-4b7e-9a51-2c43d8e6a001","type":"image","values":[{"attribute":"attributeName","language":"languageEnglishUS","value":"New"}]}`)
	importOut(t, dst, dir, "4", "1 created, 2 updated, 7 unchanged, 0 files uploaded, 3 transactions")
	importOut(t, dst, dir, "4", "0 created, 0 updated, 10 unchanged, 0 files uploaded, 0 transactions")

	// An edited file and a value left out of a file.
	editFile(t, dir, `"value": "Hallo"`, `"value": "Servus"`)
	editFile(t, dir, `,
    {
      "attribute": "price",
      "value": 12.5
    }`, "")
	importOut(t, dst, dir, "4", "0 created, 1 updated, 9 unchanged, 0 files uploaded, 1 transactions")
	var de branchObject
	a.call(http.MethodGet, "/branches/4/objects/home?languages=202&attributes=title,price", "", &de)
	if len(de.Values) != 1 || de.Values[0].Value != "Servus" {
		t.Errorf("home after the edit: %+v, want only the German title Servus", de.Values)
	}

	// A child branch inherits everything: nothing to write; an edit there
	// is an override of the child, the parent keeps its value.
	var child struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	a.call(http.MethodPost, "/branches", `{"values":[`+val(1000, 201, "Spring")+`,`+val(4000, 0, 4)+`]}`, &child)
	cb := fmt.Sprint(child.Meta.ID)
	importOut(t, dst, dir, cb, "0 created, 0 updated, 10 unchanged, 0 files uploaded, 0 transactions")
	editFile(t, dir, `"value": "Servus"`, `"value": "Grüß Gott"`)
	importOut(t, dst, dir, cb, "0 created, 1 updated, 9 unchanged, 0 files uploaded, 1 transactions")
	var inChild, inParent branchObject
	a.call(http.MethodGet, "/branches/"+cb+"/objects/home?inherited=true&languages=202&attributes=title", "", &inChild)
	a.call(http.MethodGet, "/branches/4/objects/home?languages=202&attributes=title", "", &inParent)
	if len(inChild.Values) != 1 || inChild.Values[0].Value != "Grüß Gott" || len(inParent.Values) != 1 || inParent.Values[0].Value != "Servus" {
		t.Errorf("child %+v, parent %+v: want the child's override and the parent's own value", inChild.Values, inParent.Values)
	}
	// The child's export (the article type with the target's GUID) is what
	// the child shows: importing it there writes nothing.
	childDir := filepath.Join(t.TempDir(), "child")
	runBranch(t, dst, "export", "--branch", cb, childDir)
	importOut(t, dst, childDir, cb, "0 created, 0 updated, 10 unchanged, 0 files uploaded, 0 transactions")
	if got := readTree(t, childDir)["types/"+ownType.Meta.GUID+".json"]; !strings.Contains(got, `"value": "Article"`) {
		t.Errorf("the child's export of the matched type: %q", got)
	}
}
