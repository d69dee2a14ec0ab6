package index

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/openapitest"
)

// The contract test sends realistic requests for every Index operation over
// HTTP and checks each request and response against NovaDB's published
// document (testdata/index-6.0.json, kept verbatim).

var (
	indexDocOnce sync.Once
	indexDoc     *openapitest.Document
	indexDocErr  error
)

// contractDoc loads index-6.0.json. Error bodies are
// application/problem+json, accepted where the document says
// application/json (docs/api-reference.md §4).
func contractDoc(t *testing.T) *openapitest.Document {
	t.Helper()
	indexDocOnce.Do(func() {
		var b []byte
		if b, indexDocErr = os.ReadFile("testdata/index-6.0.json"); indexDocErr != nil {
			return
		}
		indexDoc, indexDocErr = openapitest.Load(b, openapitest.WithContentTypeAlias("application/problem+json", "application/json"))
	})
	if indexDocErr != nil {
		t.Fatal(indexDocErr)
	}
	return indexDoc
}

// exchange POSTs body to the operation with operationId op (path
// parameters filled from args), validates request and response against
// the document and returns the decoded response body.
func (h *harness) exchange(t *testing.T, seen map[string]bool, op string, want int, body string, args ...any) map[string]any {
	t.Helper()
	d := contractDoc(t)
	method, tmpl, ok := d.Operation(op)
	if !ok {
		t.Fatalf("operation %s not in the document", op)
	}
	path := tmpl
	if len(args) > 0 {
		path = fmt.Sprintf(replaceParams(tmpl), args...)
	}
	req, err := http.NewRequest(method, h.url+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if err := d.ValidateRequest(req, []byte(body)); err != nil {
		t.Errorf("%s: %v", op, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", op, body, resp.StatusCode, want, rb)
	}
	if err := d.ValidateResponse(req, []byte(body), resp, rb); err != nil {
		t.Errorf("%s: %v\nbody: %s", op, err, rb)
	}
	seen[op] = true
	var m map[string]any
	if err := json.Unmarshal(rb, &m); err != nil {
		t.Fatalf("%s: %q: %v", op, rb, err)
	}
	return m
}

// replaceParams turns {name} path parameters into %v verbs.
func replaceParams(tmpl string) string {
	var b bytes.Buffer
	in := false
	for _, r := range tmpl {
		switch {
		case r == '{':
			in = true
			b.WriteString("%v")
		case r == '}':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestContractIndexOperations(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ed := content.Change{Caller: &auth.Principal{Name: "editor"}}
	// An XmlRef attribute and an object whose body links to objs[0] and
	// objs[1], plus two comments with a mention.
	_, attr, err := h.svc.CreateObjects(ctx, "4", ed, []content.ObjectInput{{TypeID: content.TypeAttribute,
		Values: []content.ValueInput{{Attribute: content.AttrDataType, JSON: []byte(`"XmlRef.SimpleHtml"`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	xml, _ := json.Marshal(fmt.Sprintf(`<div><p>See <a href="objref:%d">Alpha</a> and <a data-objref="%d">Beta</a></p></div>`, h.objs[0], h.objs[1]))
	_, linking, err := h.svc.CreateObjects(ctx, "4", ed, []content.ObjectInput{{TypeID: h.article, Values: []content.ValueInput{
		{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: []byte(`"Delta links"`)},
		{Attribute: attr[0], JSON: xml}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.CreateComment(ctx, content.Actor{Caller: &auth.Principal{Name: "ann"}}, 4, h.objs[0],
		`<div>Check the <b>intro</b> <span class="mention" data-user="Bob">@Bob</span></div>`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.CreateComment(ctx, content.Actor{Caller: &auth.Principal{Name: "Bob"}}, 4, linking[0], `<div>Intro fixed</div>`); err != nil {
		t.Fatal(err)
	}
	v := h.sync()
	seen := map[string]bool{}
	typ := h.article

	// Objects.
	m := h.exchange(t, seen, "ObjectIndex_ObjectSearch", 200, fmt.Sprintf(`{"filter":{"uiLanguage":201,"objectTypeIds":[%d],
		"deleted":false,"modifiedBy":"editor"},
		"sortBy":[{"sortBy":3,"reverse":true},{"sortBy":1}],"page":{"skip":1,"take":2},
		"minChangeTrackingVersion":%d,"maxWaitTime":"PT1S"}`, typ, v), 4)
	if objs, _ := m["objects"].([]any); len(objs) != 2 || m["more"] != true || m["changeTrackingVersion"] != float64(v) {
		t.Errorf("ObjectSearch: %v", m)
	}
	h.exchange(t, seen, "ObjectIndex_ObjectSearch", 200, fmt.Sprintf(`{"filter":{"filters":[
		{"attrId":%d,"langId":%d,"variantId":0,"value":"Al*","compareOperator":6}],
		"quickSearchAttributes":[{"attrId":%d,"langId":%d,"variantId":0}],"hasDisplayName":true},
		"sortBy":[{"sortBy":6,"attrId":%d,"langId":%d,"variantId":0}]}`,
		content.AttrName, content.LanguageEnUS, content.AttrName, content.LanguageEnUS, content.AttrName, content.LanguageEnUS), 4)
	m = h.exchange(t, seen, "ObjectIndex_ObjectSearch", 200, `{"filter":{"fullText":"product links","quickSearchFullText":true,
		"hasLocalValues":true,"modifiedSince":"2000-01-01T00:00:00Z","searchPhrase":"del*"},"sortBy":[{"sortBy":4,"reverse":true}],
		"page":{"take":0}}`, 4)
	if objs, _ := m["objects"].([]any); len(objs) != 0 {
		t.Errorf("ObjectSearch fullText without a match: %v", m)
	}
	m = h.exchange(t, seen, "ObjectIndex_ObjectSearch", 200, `{"filter":{"fullText":"alpha","searchPhrase":"del*"}}`, 4)
	if objs, _ := m["objects"].([]any); len(objs) != 1 || objs[0].(map[string]any)["id"] != float64(linking[0]) {
		t.Errorf("ObjectSearch fullText: %v", m)
	}
	h.exchange(t, seen, "ObjectIndex_Suggestions", 200, `{"pattern":"gamm","suggestDisplayName":true,"suggestFullText":true,
		"fuzzy":true,"fuzzyMinSimilarity":0.7,"fuzzyPrefixLength":1,"sortByValue":true,"analyze":true,"take":10}`, 4)
	m = h.exchange(t, seen, "ObjectIndex_ObjectCount", 200, fmt.Sprintf(`{"filter":{"objectTypeIds":[%d],"searchPhrase":"be*"},"minChangeTrackingVersion":%d,"maxWaitTime":"PT2S"}`, typ, v), 4)
	if m["count"] != float64(1) || m["changeTrackingVersion"] != float64(v) {
		t.Errorf("ObjectCount: %v", m)
	}
	m = h.exchange(t, seen, "ObjectIndex_ObjectOccurrences", 200, fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]},
		"getModifiedByOccurrences":true,"getTypeOccurrences":true,"getDeletedOccurrences":true,
		"page":{"skip":0,"take":10}}`, typ), 4)
	if m["typeOccurrences"] == nil || m["modifiedByOccurrences"] == nil || m["deletedOccurrences"] == nil {
		t.Errorf("ObjectOccurrences: %v", m)
	}
	m = h.exchange(t, seen, "ObjectIndex_Suggestions", 200, fmt.Sprintf(`{"pattern":"gam","suggestDisplayName":true,
		"suggestAttributes":[{"attrId":%d,"langId":%d,"variantId":0}],"filter":{"objectTypeIds":[%d]},"take":5}`,
		content.AttrName, content.LanguageEnUS, typ), 4)
	if s, _ := m["suggestions"].([]any); len(s) == 0 {
		t.Errorf("Suggestions: %v", m)
	}
	m = h.exchange(t, seen, "ObjectIndex_WorkItemOccurrences", 200, `{"page":{"take":10},"maxWaitTime":"PT1S"}`)
	if m["branchOccurrences"] == nil {
		t.Errorf("WorkItemOccurrences: %v", m)
	}
	m = h.exchange(t, seen, "ObjectIndex_ObjectXmlLinkCount", 200, fmt.Sprintf(`{"objectIds":[%d,%d],"minChangeTrackingVersion":%d}`, h.objs[0], h.objs[1], v), 4)
	if m["count"] != float64(1) || m["changeTrackingVersion"] != float64(v) {
		t.Errorf("ObjectXmlLinkCount: %v", m)
	}
	m = h.exchange(t, seen, "Utility_MatchStrings", 200, `{"query":"test* OR best","useOrOperator":true,"strings":["test","testing","best","rest"]}`)
	if fmt.Sprint(m["indexes"]) != "[0 1 2]" {
		t.Errorf("MatchStrings: %v", m)
	}

	// Comments.
	m = h.exchange(t, seen, "CommentIndex_CommentSearch", 200, fmt.Sprintf(`{"filter":{"searchPhrase":"intro","objectTypes":[%d]},
		"sort":{"field":2,"reverse":true},"page":{"skip":0,"take":1},"maxWaitTime":"PT1S"}`, typ), 4)
	if cs, _ := m["comments"].([]any); len(cs) != 1 || m["more"] != true || m["changeTrackingTimestamp"] == nil {
		t.Errorf("CommentSearch: %v", m)
	}
	m = h.exchange(t, seen, "CommentIndex_CommentCount", 200, `{"filter":{"mentioned":"bob","user":"ann"},"minChangeTrackingTimestamp":"2000-01-01T00:00:00Z"}`, 4)
	if m["count"] != float64(1) {
		t.Errorf("CommentCount: %v", m)
	}
	m = h.exchange(t, seen, "CommentIndex_CommentOccurrences", 200, `{"getUserOccurrences":true,"getMentionedUsersOccurrences":true,"getObjectTypeOccurrences":true,"page":{"take":10}}`, 4)
	if m["userOccurrences"] == nil || m["mentionedUsersOccurrences"] == nil || m["objectTypeOccurrences"] == nil {
		t.Errorf("CommentOccurrences: %v", m)
	}

	// Empty results (unknown branch, no comments there) keep the shapes.
	h.exchange(t, seen, "ObjectIndex_ObjectSearch", 200, `{}`, 77777)
	h.exchange(t, seen, "CommentIndex_CommentSearch", 200, `{}`, 77777)
	h.exchange(t, seen, "CommentIndex_CommentOccurrences", 200, `{}`, 77777)

	// Bad requests answer 400 with a body the document accepts.
	h.exchange(t, seen, "ObjectIndex_ObjectSearch", 400, `{"page":{"skip":-1}}`, 4)
	h.exchange(t, seen, "ObjectIndex_Suggestions", 400, `{"pattern":"a","take":0}`, 4)
	h.exchange(t, seen, "Utility_MatchStrings", 400, `{"query":"(test","strings":["a"]}`)
	h.exchange(t, seen, "CommentIndex_CommentSearch", 400, `{"page":{"skip":-1}}`, 4)

	for _, op := range allOperations(t) {
		if !seen[op] {
			t.Errorf("operation %s not exercised", op)
		}
	}
}

// allOperations lists the operationIds of the document.
func allOperations(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/index-6.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, item := range d.Paths {
		for _, op := range item {
			ops = append(ops, op.OperationID)
		}
	}
	slices.Sort(ops)
	if len(ops) != 10 {
		t.Fatalf("document has %d operations, want 10", len(ops))
	}
	return ops
}
