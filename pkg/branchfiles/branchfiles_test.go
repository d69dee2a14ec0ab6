package branchfiles

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const guidA = "2b7682c4-542b-4ac0-9468-de894062fb9f"

func sampleObject() Object {
	return Object{GUID: guidA, APIIdentifier: "home", Type: "article", Values: []Value{
		{Attribute: "title", Language: "languageGermanGermany", Value: json.RawMessage(`"Hallo"`)},
		{Attribute: "related", Value: json.RawMessage(`"b2fc063e-446d-4674-b169-b0e992f1310f"`)},
		{Attribute: "related", Value: json.RawMessage(`"about"`), SortReverse: 1},
		{Attribute: "attributeName", Language: "languageEnglishUS", Value: json.RawMessage(`"Home <b>&</b>"`)},
	}}
}

// TestEncodeIsCanonical: keys in a fixed order, values sorted by group with
// the rows of a group in their order, no HTML escaping, one newline; the
// same object in another order encodes to the same bytes.
func TestEncodeIsCanonical(t *testing.T) {
	o := sampleObject()
	b, err := Encode(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "guid": "2b7682c4-542b-4ac0-9468-de894062fb9f",
  "apiIdentifier": "home",
  "type": "article",
  "values": [
    {
      "attribute": "attributeName",
      "language": "languageEnglishUS",
      "value": "Home <b>&</b>"
    },
    {
      "attribute": "related",
      "value": "b2fc063e-446d-4674-b169-b0e992f1310f"
    },
    {
      "attribute": "related",
      "value": "about",
      "sortReverse": 1
    },
    {
      "attribute": "title",
      "language": "languageGermanGermany",
      "value": "Hallo"
    }
  ]
}
`
	if string(b) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", b, want)
	}
	shuffled := o
	shuffled.Values = []Value{o.Values[3], o.Values[1], o.Values[0], o.Values[2]}
	if b2, _ := Encode(shuffled); string(b2) != string(b) {
		t.Errorf("another value order encodes differently:\n%s", b2)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if b3, _ := Encode(back); string(b3) != string(b) {
		t.Errorf("Decode → Encode changed the file:\n%s", b3)
	}
	empty, _ := Encode(Object{GUID: guidA, Type: "root"})
	if !strings.Contains(string(empty), `"values": []`) {
		t.Errorf("an object without values: %s", empty)
	}
}

// TestDecodeRefuses: unknown fields, nested values, bad GUIDs, missing
// type or attribute, and files over the limit.
func TestDecodeRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":   `{"guid":"` + guidA + `","type":"a","values":[],"id":5}`,
		"object value":    `{"guid":"` + guidA + `","type":"a","values":[{"attribute":"x","value":{"a":1}}]}`,
		"array value":     `{"guid":"` + guidA + `","type":"a","values":[{"attribute":"x","value":[1]}]}`,
		"missing value":   `{"guid":"` + guidA + `","type":"a","values":[{"attribute":"x"}]}`,
		"no attribute":    `{"guid":"` + guidA + `","type":"a","values":[{"value":1}]}`,
		"upper-case guid": `{"guid":"` + strings.ToUpper(guidA) + `","type":"a","values":[]}`,
		"no type":         `{"guid":"` + guidA + `","values":[]}`,
		"two documents":   `{"guid":"` + guidA + `","type":"a","values":[]} {}`,
		"too large":       `{"guid":"` + guidA + `","type":"a","values":[{"attribute":"x","value":"` + strings.Repeat("x", MaxObjectFileBytes) + `"}]}`,
	} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadDirChecksTheLayout: a file named by another GUID, a GUID twice,
// an object in the wrong folder, a stray file and a badly named stored
// file are refused; other entries of the directory are ignored.
func TestReadDirChecksTheLayout(t *testing.T) {
	good, _ := Encode(sampleObject())
	typ, _ := Encode(Object{GUID: "e91f6bce-4d8e-4e39-aa07-460039a0ba61", APIIdentifier: "article", Type: rootName})
	base := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, dir, "objects/article/"+guidA+".json", string(good))
		writeFile(t, dir, "types/e91f6bce-4d8e-4e39-aa07-460039a0ba61.json", string(typ))
		writeFile(t, dir, "files/85ba4f93-9fb5-0915-6b56-d27ffc600103.png", "png")
		writeFile(t, dir, "README.md", "ignored")
		return dir
	}
	set, err := ReadDir(base(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Objects) != 2 || len(set.Files) != 1 || set.Paths()[0] != "objects/article/"+guidA+".json" {
		t.Errorf("ReadDir = %v, files %v", set.Paths(), set.Files)
	}
	for name, add := range map[string][2]string{
		"misnamed":       {"objects/article/00000000-1111-2222-3333-444444444444.json", string(good)},
		"twice":          {"objects/other/" + guidA + ".json", string(good)},
		"type elsewhere": {"attributes/e91f6bce-4d8e-4e39-aa07-460039a0ba61.json", string(typ)},
		"not a type":     {"types/" + guidA + ".json", string(good)},
		"too deep":       {"objects/article/x/" + guidA + ".json", string(good)},
		"stored file":    {"files/logo.png", "png"},
		"upper-case md5": {"files/85BA4F93-9FB5-0915-6B56-D27FFC600103.png", "png"},
	} {
		dir := base(t)
		if name == "type elsewhere" {
			_ = os.Remove(filepath.Join(dir, "types/e91f6bce-4d8e-4e39-aa07-460039a0ba61.json"))
		}
		writeFile(t, dir, add[0], add[1])
		if _, err := ReadDir(dir); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// TestWriteRemovesStaleFiles: writing a set into a directory that holds an
// older export removes the files of objects gone and their empty folders.
func TestWriteRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	o := sampleObject()
	gone := Object{GUID: "44e52f1f-0672-4fb2-88d0-a8672a7aa0e4", Type: "page"}
	old := &Set{Objects: map[string]Object{"objects/article/" + o.GUID + ".json": o, "objects/page/" + gone.GUID + ".json": gone},
		Files: []string{"85ba4f93-9fb5-0915-6b56-d27ffc600103.png"}}
	writeFile(t, dir, "files/85ba4f93-9fb5-0915-6b56-d27ffc600103.png", "png")
	if err := old.write(dir); err != nil {
		t.Fatal(err)
	}
	now := &Set{Objects: map[string]Object{"objects/article/" + o.GUID + ".json": o}}
	if err := now.write(dir); err != nil {
		t.Fatal(err)
	}
	set, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Objects) != 1 || len(set.Files) != 0 {
		t.Errorf("after the second write: %v, files %v", set.Paths(), set.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, "objects", "page")); !os.IsNotExist(err) {
		t.Errorf("the empty folder of a type stayed: %v", err)
	}
}

// TestFileName: the MD5 in GUID or hex form, any case, with or without the
// dot, gives one name; no MD5 gives none.
func TestFileName(t *testing.T) {
	want := "85ba4f93-9fb5-0915-6b56-d27ffc600103.png"
	for _, in := range [][2]string{{"85ba4f93-9fb5-0915-6b56-d27ffc600103", ".png"}, {"85BA4F939FB509156B56D27FFC600103", "png"}} {
		if got := fileName(in[0], in[1]); got != want {
			t.Errorf("fileName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	if got := fileName("not-an-md5", ".png"); got != "" {
		t.Errorf("fileName of no MD5 = %q", got)
	}
	if got := fileName("85ba4f93-9fb5-0915-6b56-d27ffc600103", "../x"); got != "85ba4f93-9fb5-0915-6b56-d27ffc600103" {
		t.Errorf("an unsafe extension is kept: %q", got)
	}
}

// TestBatchesBoundRequests: at most writeBatchObjects objects and about
// writeBatchBytes bytes per write request, none empty.
func TestBatchesBoundRequests(t *testing.T) {
	objs := make([]apiObject, 250)
	if b := batches(objs); len(b) != 3 || len(b[0]) != writeBatchObjects || len(b[2]) != 50 {
		t.Errorf("250 small objects in %d batches", len(b))
	}
	big := apiObject{Values: []apiValue{{Value: json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)}}}
	if b := batches([]apiObject{big, big, big, big}); len(b) != 2 {
		t.Errorf("4 objects of 1 MiB in %d batches, want 2", len(b))
	}
}

func id(n int64) *int64 { return &n }

// TestDiff: a group the file changes is sent whole, a group only the
// branch has is removed with null, an unchanged object sends nothing, an
// ApiIdentifier is set where the branch has none and never changed.
func TestDiff(t *testing.T) {
	snap := &snapshot{byID: map[int64]*apiObject{}, byGUID: map[string]*apiObject{}, byAPI: map[string]*apiObject{}}
	snap.add(
		apiObject{Meta: apiMeta{ID: 1000, GUID: "00000000-0000-0000-0000-0000000003e8", APIIdentifier: "attributeName", TypeRef: id(10)},
			Values: []apiValue{{Attribute: attrDataType, Value: json.RawMessage(`"String"`)}}},
		apiObject{Meta: apiMeta{ID: attrDataType, GUID: "00000000-0000-0000-0000-0000000003e9", APIIdentifier: "attributeDataType", TypeRef: id(10)}},
		apiObject{Meta: apiMeta{ID: 201, GUID: "00000000-0000-0000-0000-0000000000c9", APIIdentifier: "en", TypeRef: id(20)}},
		apiObject{Meta: apiMeta{ID: 5000, GUID: "e91f6bce-4d8e-4e39-aa07-460039a0ba61", APIIdentifier: "article", TypeRef: id(0)}},
		apiObject{Meta: apiMeta{ID: 5001, GUID: "9b47261c-2aa7-46d6-9376-a0fd45765151", APIIdentifier: "note", TypeRef: id(10)},
			Values: []apiValue{{Attribute: attrDataType, Value: json.RawMessage(`"String"`)}}},
		apiObject{Meta: apiMeta{ID: 5002, GUID: guidA, TypeRef: id(5000)}, Values: []apiValue{
			{Attribute: 1000, Language: 201, Value: json.RawMessage(`"Home"`), SortReverse: id(0)},
			{Attribute: 5001, Value: json.RawMessage(`"old"`), SortReverse: id(0)},
		}},
	)
	im := &importer{set: &Set{Objects: map[string]Object{}}, snap: snap}
	im.index()
	cur := *snap.byID[5002]
	same := Object{GUID: guidA, Type: "article", Values: []Value{{Attribute: "attributeName", Language: "en", Value: json.RawMessage(`"Home"`)},
		{Attribute: "note", Value: json.RawMessage(`"old"`)}}}
	if _, changed, err := im.diff(context.Background(), same, cur); err != nil || changed {
		t.Errorf("an object as its file says: changed %v, %v", changed, err)
	}
	changedName := Object{GUID: guidA, APIIdentifier: "home", Type: "article", Values: []Value{{Attribute: "attributeName", Language: "en", Value: json.RawMessage(`"Start"`)}}}
	patch, changed, err := im.diff(context.Background(), changedName, cur)
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	b, _ := json.Marshal(patch)
	want := `{"meta":{"id":5002,"apiIdentifier":"home"},"values":[{"attribute":1000,"variant":0,"language":201,"value":"Start","sortReverse":0},` +
		`{"attribute":5001,"variant":0,"language":0,"value":null}]}`
	if string(b) != want {
		t.Errorf("patch = %s\nwant    %s", b, want)
	}
	cur.Meta.APIIdentifier = "start"
	if _, _, err := im.diff(context.Background(), changedName, cur); err == nil || !strings.Contains(err.Error(), "never changes") {
		t.Errorf("another ApiIdentifier: %v", err)
	}
}
