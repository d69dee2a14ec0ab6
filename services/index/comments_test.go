package index

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

func TestCommentsOverHTTP(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// Before any comment: no timestamp, no comments.
	m := h.post(t, 200, "/branches/4/comments", `{}`)
	if c, ok := m["comments"].([]any); !ok || len(c) != 0 || m["more"] != false || m["changeTrackingTimestamp"] != nil {
		t.Fatalf("empty: %v", m)
	}
	ann, bob := content.Actor{Caller: &auth.Principal{Name: "ann"}}, content.Actor{Caller: &auth.Principal{Name: "Bob"}}
	c1, err := h.svc.CreateComment(ctx, ann, 4, h.objs[0], `<div>Check the <b>intro</b> <span class="mention" data-user="Bob">@Bob</span></div>`)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := h.svc.CreateComment(ctx, bob, 4, h.objs[1], `<div>Intro fixed, thanks <span class="mention">@ann</span></div>`)
	if err != nil {
		t.Fatal(err)
	}
	h.sync()

	m = h.post(t, 200, "/branches/4/comments", `{"filter":{"searchPhrase":"intro"},"sort":{"field":0,"reverse":false},"page":{"skip":0,"take":1}}`)
	cs := m["comments"].([]any)
	if len(cs) != 1 || m["more"] != true {
		t.Fatalf("search: %v", m)
	}
	first := cs[0].(map[string]any)
	if first["id"] != float64(c1.ID) { // int64 as a JSON number (NovaDB marshaler)
		t.Errorf("first id %v, want %d", first["id"], c1.ID)
	}
	if first["user"] != "ann" || first["objectRef"] != float64(h.objs[0]) || first["objectType"] != float64(h.article) ||
		first["summary"] != "Check the intro @Bob" || fmt.Sprint(first["mentionedUsers"]) != "[Bob]" ||
		first["created"] != c1.Created.Format(time.RFC3339Nano) || first["modified"] == nil {
		t.Errorf("first item: %v", first)
	}
	ts, _ := m["changeTrackingTimestamp"].(string)
	if got, err := time.Parse(time.RFC3339Nano, ts); err != nil || !got.Equal(c2.Modified) {
		t.Errorf("changeTrackingTimestamp %q, want %v", ts, c2.Modified)
	}
	m = h.post(t, 200, "/branches/4/comments", `{"filter":{"mentioned":"ann","user":"BOB"}}`)
	if cs := m["comments"].([]any); len(cs) != 1 || cs[0].(map[string]any)["user"] != "Bob" {
		t.Errorf("mentioned+user: %v", m)
	}
	m = h.post(t, 200, "/branches/4/commentCount", fmt.Sprintf(`{"filter":{"objectTypes":[%d]}}`, h.article))
	if m["count"] != float64(2) {
		t.Errorf("count: %v", m)
	}
	m = h.post(t, 200, "/branches/4/commentOccurrences", `{"getUserOccurrences":true,"getMentionedUsersOccurrences":true}`)
	u := m["userOccurrences"].(map[string]any)
	if u["valueType"] != "string" || u["notNullOccurrences"] != float64(2) || len(u["valueOccurrences"].([]any)) != 2 {
		t.Errorf("user occurrences: %v", m)
	}
	if m["objectTypeOccurrences"] != nil {
		t.Errorf("unrequested objectTypeOccurrences: %v", m)
	}
	mu := m["mentionedUsersOccurrences"].(map[string]any)
	if fmt.Sprint(mu["valueOccurrences"]) != "[map[count:1 value:Bob] map[count:1 value:ann]]" {
		t.Errorf("mentioned occurrences: %v", mu)
	}

	// Read your writes by timestamp: the delete is seen once applied.
	if err := h.svc.DeleteComment(ctx, ann, c1.ID); err != nil {
		t.Fatal(err)
	}
	del, err := h.svc.GetComment(ctx, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"minChangeTrackingTimestamp":%q,"maxWaitTime":"00:00:10"}`, del.Modified.Format(time.RFC3339Nano))
	got := make(chan map[string]any, 1)
	go func() {
		resp, err := http.Post(h.url+"/branches/4/commentCount", "application/json", strings.NewReader(body))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		got <- m
	}()
	time.Sleep(100 * time.Millisecond)
	h.sync()
	if m := <-got; m == nil || m["count"] != float64(1) {
		t.Errorf("count after delete: %v", m)
	}
}

func TestXMLLinkCountOverHTTP(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ch := content.Change{Caller: &auth.Principal{Name: "editor"}}
	_, attr, err := h.svc.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.TypeAttribute,
		Values: []content.ValueInput{{Attribute: content.AttrDataType, JSON: []byte(`"XmlRef.SimpleHtml"`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	xml := fmt.Sprintf(`"<div><a href=\"objref:%d\">alpha</a></div>"`, h.objs[0])
	if _, err := h.svc.UpdateObjects(ctx, "4", ch, []content.ObjectInput{{ID: h.objs[1],
		Values: []content.ValueInput{{Attribute: attr[0], JSON: []byte(xml)}}}}); err != nil {
		t.Fatal(err)
	}
	v := h.sync()
	m := h.post(t, 200, "/branches/4/objectXmlLinkCount", fmt.Sprintf(`{"objectIds":[%d,%d]}`, h.objs[0], h.objs[2]))
	if m["count"] != float64(1) || m["changeTrackingVersion"] != float64(v) {
		t.Errorf("link count: %v", m)
	}
	m = h.post(t, 200, "/branches/4/objectXmlLinkCount", fmt.Sprintf(`{"objectIds":[%d]}`, h.objs[2]))
	if m["count"] != float64(0) {
		t.Errorf("no links: %v", m)
	}
}
