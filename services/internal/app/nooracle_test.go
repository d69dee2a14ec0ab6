package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// internalNames are component names that must not reach a client's
// ProblemDetails (they belong in logs).
var internalNames = []string{"delivery:", "indexing:", "indexwriter:", "content:", "store:", "search:", "bleve:", "indexquery:", "indexdoc:", "webhooks:", "textmatch:"}

// leaksInternals returns the internal component name a client-facing
// answer names, or "".
func leaksInternals(body []byte) string {
	for _, n := range internalNames {
		if bytes.Contains(body, []byte(n)) {
			return n
		}
	}
	return ""
}

// withoutVersions is a JSON answer without its change-tracking version or
// timestamp (which move with every write), for comparing answers.
func withoutVersions(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return string(body) // not an object (Delivery config lists): as is
	}
	delete(m, "changeTrackingVersion")
	delete(m, "changeTrackingTimestamp")
	out, _ := json.Marshal(m)
	return string(out)
}

// TestUnknownBranchListsAreEmptyForEveryone (issue 28 item 1): a list,
// count or occurrences of the Index group or of Delivery on a branch that
// does not exist answers 200 with nothing, for an administrator and a user
// with read grants alike (as NovaDB answers), and a branch the user may not
// read answers exactly the same (no existence oracle). Single-object reads
// refuse an unknown and an unreadable branch alike (403), and no error
// names an internal component. Exchanges are validated against NovaDB's
// Index document and the served Delivery document.
func TestUnknownBranchListsAreEmptyForEveryone(t *testing.T) {
	eachGrantsSystem(t, testUnknownBranchListsAreEmpty)
}

func testUnknownBranchListsAreEmpty(t *testing.T, w grantsWorld) {
	const unknown = "999999999"
	b := strconv.FormatInt(w.b, 10)
	nova := novaIndexDoc(t)
	fresh := fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"PT10S"`, w.version) // the document's duration form
	ops := []struct{ path, body, empty string }{
		{"objects", `{"filter":{"fullText":"confidential"},` + fresh + `}`, `{"more":false,"objects":[]}`},
		{"objectCount", `{"filter":{"searchPhrase":"confidential"},` + fresh + `}`, `{"count":0}`},
		{"objectOccurrences", `{"getTypeOccurrences":true,` + fresh + `}`, ""},
		{"suggestions", `{"pattern":"conf","suggestDisplayName":true,` + fresh + `}`, `{"suggestions":[]}`},
		{"objectXmlLinkCount", `{"objectIds":[1],` + fresh + `}`, `{"count":0}`},
		{"comments", `{}`, `{"comments":[],"more":false}`},
		{"commentCount", `{}`, `{"count":0}`},
		{"commentOccurrences", `{"getUserOccurrences":true}`, ""},
	}
	for _, op := range ops {
		path := func(branch string) string { return "/apis/index/v1/branches/" + branch + "/" + op.path }
		want := w.adminI.must(http.StatusOK, http.MethodPost, path(unknown), op.body)
		nova.check(t, http.MethodPost, path(unknown), op.body, want)
		if op.empty != "" && withoutVersions(t, want.body) != op.empty {
			t.Errorf("admin %s on an unknown branch: %s, want %s", op.path, want.body, op.empty)
		}
		for _, branch := range []string{unknown, b, "4", "noSuchBranch"} {
			r := w.readerI.do(http.MethodPost, path(branch), op.body)
			if r.code != http.StatusOK || withoutVersions(t, r.body) != withoutVersions(t, want.body) {
				t.Errorf("reader %s on branch %s: %d %s, want 200 %s (the answer of an unknown branch)", op.path, branch, r.code, r.body, want.body)
				continue
			}
			if _, err := strconv.Atoi(branch); err == nil {
				nova.check(t, http.MethodPost, path(branch), op.body, r)
			} else { // NovaDB's document says int32; "draft" and ApiIdentifiers are ours
				nova.checkAnswer(t, http.MethodPost, path(branch), op.body, r)
			}
		}
	}

	deliv := loadServedDoc(t, "Delivery")
	minV := []string{"X-Cms-Min-Version", strconv.FormatInt(w.version, 10), "X-Cms-Max-Wait", "20s"}
	lists := []string{"objects?take=10", "types/doc/objects?take=10", "count", "types/doc/count",
		"occurrences?fields=attributeName", "types/doc/occurrences?fields=attributeName",
		"suggestions?pattern=conf&fields=attributeName", "types/doc/suggestions?pattern=conf&fields=attributeName",
		"config/languages", "config/types"}
	for _, l := range lists {
		target := func(branch string) string { return "/delivery/api/branches/" + branch + "/" + l }
		want := w.adminD.must(http.StatusOK, http.MethodGet, target(unknown), "", minV...)
		deliv.check(t, http.MethodGet, target(unknown), "", want)
		if bytes.Contains(want.body, []byte("confidential")) || bytes.Contains(want.body, []byte(`"count":1`)) {
			t.Errorf("admin %s on an unknown branch is not empty: %s", l, want.body)
		}
		for _, branch := range []string{unknown, b, "4", "noSuchBranch"} {
			r := w.readerD.do(http.MethodGet, target(branch), "", minV...)
			if r.code != http.StatusOK || !bytes.Equal(r.body, want.body) {
				t.Errorf("reader %s on branch %s: %d %s, want 200 %s (the answer of an unknown branch)", l, branch, r.code, r.body, want.body)
				continue
			}
			deliv.check(t, http.MethodGet, target(branch), "", r)
		}
	}

	// The HTTP cache in front of Delivery never hands the reader what it
	// stored for the administrator: B's list, read (and stored) by the
	// administrator without read-your-writes headers, is still the empty
	// list to the reader.
	plain := "/delivery/api/branches/" + b + "/objects?take=10"
	emptyList := w.adminD.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/"+unknown+"/objects?take=10", "")
	for range 2 {
		if r := w.adminD.must(http.StatusOK, http.MethodGet, plain, ""); bytes.Equal(r.body, emptyList.body) {
			t.Fatalf("admin's list of B is empty: %s", r.body)
		}
	}
	if r := w.readerD.must(http.StatusOK, http.MethodGet, plain, ""); !bytes.Equal(r.body, emptyList.body) {
		t.Errorf("reader's list of B after the administrator's: %s, want %s", r.body, emptyList.body)
	}

	// Single objects: an unknown branch and one the reader may not read
	// are refused alike; the administrator's 404 names no component.
	single := func(c httpClient, branch string) httpResult {
		return c.do(http.MethodGet, "/delivery/api/branches/"+branch+"/objects/4", "", minV...)
	}
	refusal := func(r httpResult, branch string) string {
		return strings.ReplaceAll(fmt.Sprintf("%d %s", r.code, problemDetail(t, r.body)), branch, "<branch>")
	}
	hidden, missing := single(w.readerD, b), single(w.readerD, unknown)
	if hidden.code != http.StatusForbidden || refusal(hidden, b) != refusal(missing, unknown) {
		t.Errorf("reader: unreadable branch %q, unknown branch %q: want the same 403", refusal(hidden, b), refusal(missing, unknown))
	}
	deliv.check(t, http.MethodGet, "/delivery/api/branches/"+b+"/objects/4", "", hidden)
	admin404 := single(w.adminD, unknown)
	if admin404.code != http.StatusNotFound {
		t.Errorf("admin on an unknown branch: %d %s, want 404", admin404.code, admin404.body)
	}
	for _, r := range []httpResult{hidden, missing, admin404,
		w.adminI.do(http.MethodPost, "/apis/index/v1/branches/4/objects", `{"filter":{"fullText":"(unbalanced"}}`),
		w.adminD.do(http.MethodGet, "/delivery/api/branches/"+unknown+"/objects/4", "")} {
		if n := leaksInternals(r.body); n != "" {
			t.Errorf("an error names the internal component %q: %s", n, r.body)
		}
	}
}

// problemDetail is the detail of a ProblemDetails body.
func problemDetail(t *testing.T, body []byte) string {
	t.Helper()
	var p struct {
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Detail
}
