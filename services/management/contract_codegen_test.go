package management_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// contractCodeGenerator: both generator operations over HTTP, validated
// against the document (the answer is a JSON string), with ETag/304, the
// plain-text representation (Accept: text/plain) and a change of the model
// changing the answer. The generated code itself is compiled in
// pkg/codegen.
func contractCodeGenerator(t *testing.T, cl *client) {
	attr := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		body: `{"objects":[{"meta":{"typeRef":10,"apiIdentifier":"cgTitle"},"values":[
			{"attribute":1001,"language":0,"variant":0,"value":"String"},
			{"attribute":1017,"language":0,"variant":0,"value":true}]}]}`}), 1)[0]
	form := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		body: fmt.Sprintf(`{"objects":[{"meta":{"typeRef":50},"values":[{"attribute":5053,"language":0,"variant":0,"value":%d}]}]}`, attr)}), 1)[0]
	typ := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		body: fmt.Sprintf(`{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"cgArticle"},"values":[
			{"attribute":5001,"language":0,"variant":0,"value":%d},
			{"attribute":1012,"language":201,"variant":0,"value":"An article."}]}]}`, form)}), 1)[0]

	source := func(r reply) string {
		t.Helper()
		var s string
		if err := json.Unmarshal(r.body, &s); err != nil {
			t.Fatalf("the answer is not a JSON string: %v: %.200s", err, r.body)
		}
		return s
	}
	all := source(cl.do(t, 200, call{op: "CodeGenerator_GetCSharpClasses", method: "GET", path: "/branches/4/generators/csharp/types"}))
	for _, want := range []string{"namespace Cms.Models", "public partial class CgArticle", "/// An article.",
		"public global::System.Collections.Generic.Dictionary<int, string> CgTitle { get; set; }"} {
		if !strings.Contains(all, want) {
			t.Errorf("ids=all lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "class TypeAttribute") {
		t.Error("ids=all generated a system type")
	}
	ts := source(cl.do(t, 200, call{op: "CodeGenerator_GetCSharpClasses", method: "GET",
		path: fmt.Sprintf("/branches/4/generators/TypeScript/types?ids=%d,cgArticle", typ)}))
	if !strings.Contains(ts, `export type CgArticle = CmsObject<"cgArticle", CgArticleProps>;`) || !strings.Contains(ts, "  cgTitle?: string;") ||
		strings.Count(ts, "export interface") != 7 {
		t.Errorf("typescript for ids=%d,cgArticle:\n%s", typ, ts)
	}

	one := cl.do(t, 200, call{op: "CodeGenerator_GetCSharpClass", method: "GET", path: "/branches/4/generators/csharp/types/cgArticle"})
	tag := one.header.Get("ETag")
	if source(one) == all || !strings.Contains(source(one), "class CgArticle") || one.header.Get("Vary") != "Accept" {
		t.Errorf("one type: Vary %q, source:\n%s", one.header.Get("Vary"), source(one))
	}
	cl.do(t, 304, call{op: "CodeGenerator_GetCSharpClass", method: "GET", path: "/branches/4/generators/csharp/types/cgArticle",
		header: map[string]string{"If-None-Match": tag}, undeclared: true})
	// Plain text: the same source, its own tag (not declared by the
	// document, which knows the JSON string only).
	text := cl.do(t, 200, call{op: "CodeGenerator_GetCSharpClass", method: "GET", path: "/branches/4/generators/csharp/types/cgArticle",
		header: map[string]string{"Accept": "text/plain"}, undeclared: true})
	if string(text.body) != source(one) || !strings.HasPrefix(text.header.Get("Content-Type"), "text/plain") ||
		text.header.Get("ETag") == tag || text.header.Get("ETag") == "" {
		t.Errorf("text/plain: %s, ETag %s (JSON %s), body:\n%s", text.header.Get("Content-Type"), text.header.Get("ETag"), tag, text.body)
	}
	// A change of the model changes the answer and its tag.
	cl.do(t, 200, call{op: "Cms_UpdateObjects", method: "PATCH", path: "/branches/4/objects",
		body: fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":0},"values":[{"attribute":1012,"language":201,"variant":0,"value":"A longer article."}]}]}`, typ)})
	after := cl.do(t, 200, call{op: "CodeGenerator_GetCSharpClass", method: "GET", path: "/branches/4/generators/csharp/types/cgArticle",
		header: map[string]string{"If-None-Match": tag}})
	if after.header.Get("ETag") == tag || !strings.Contains(source(after), "A longer article.") {
		t.Errorf("after the change: ETag %s (was %s):\n%s", after.header.Get("ETag"), tag, source(after))
	}
}
