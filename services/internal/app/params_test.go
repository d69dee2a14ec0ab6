package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParameterRules: one rule per parameter kind (pkg/params) answers the
// same way in every group, over HTTP on the whole system: take 1..max with
// a sent 0 refused, skip >= 0, ids as plain digits, depth and sort-key
// caps, and messages that name the parameter and its range in plain words.
func TestParameterRules(t *testing.T) {
	srv := startServer(t)
	c := httpClient{t: t, base: "http://" + srv.HTTPAddr(), user: "admin", pass: "test-password"}
	// Delivery and Index find branch 4 once the bootstrap transaction is
	// indexed; before that they answer 404 whatever the parameters.
	c.must(200, "GET", "/delivery/api/branches/4/objects?take=1", "", "X-Cms-Min-Version", "1", "X-Cms-Max-Wait", "20s")
	cases := []struct {
		method, path, body string
		want               int
		detail             string // must appear in the ProblemDetails detail
	}{
		// take: absent = default, 1..max, 0 and negatives refused alike.
		{"GET", "/delivery/api/branches/4/objects?take=1", "", 200, ""},
		{"GET", "/delivery/api/branches/4/objects?take=0", "", 400, "take must be between 1 and 1000, got 0"},
		{"GET", "/delivery/api/branches/4/objects?take=-1", "", 400, "take must be between 1 and 1000, got -1"},
		{"GET", "/delivery/api/branches/4/occurrences?fields=displayName&take=0", "", 400, "take must be between 1 and 1000, got 0"},
		{"GET", "/delivery/api/branches/4/suggestions?pattern=a&fields=displayName&take=0", "", 400, "take must be between 1 and 1000, got 0"},
		{"GET", "/apis/cms/v1/branches?take=0", "", 400, "take must be between 1 and 1000, got 0"},
		{"GET", "/apis/cms/v1/branches/4/types/typeType/objects?take=0", "", 400, "take must be between 1 and 1000, got 0"},
		{"GET", "/apis/cms/v1/branches/4/types/typeType/objects?take=1001", "", 400, "take must be between 1 and 1000, got 1001"},
		{"GET", "/apis/cms/v1/comments?take=-1", "", 400, "take must be between 1 and 1000, got -1"},
		{"GET", "/apis/cms/v1/comments?take=1000", "", 200, ""},
		{"POST", "/apis/index/v1/branches/4/suggestions", `{"pattern":"a","take":0}`, 400, "take must be between 1 and"},
		// skip: 0 or more everywhere.
		{"GET", "/delivery/api/branches/4/objects?skip=-5", "", 400, "skip must be 0 or more, got -5"},
		{"POST", "/apis/index/v1/branches/4/objects", `{"page":{"skip":-5}}`, 400, "page.skip must be 0 or more, got -5"},
		{"POST", "/apis/index/v1/branches/4/comments", `{"page":{"skip":-5}}`, 400, "page.skip must be 0 or more, got -5"},
		// Branch ids: plain digits or an ApiIdentifier.
		{"GET", "/delivery/api/branches/4/objects?take=1", "", 200, ""},
		{"GET", "/delivery/api/branches/%2B4/objects", "", 400, "+4"},
		{"GET", "/delivery/api/branches/%204/objects", "", 400, "parameter branch: \" 4\" is not an identifier"},
		{"GET", "/apis/cms/v1/branches/%2B4", "", 400, "+4"},
		{"GET", "/apis/cms/v1/branches/%204/objects/1000", "", 400, "parameter branch: \" 4\" is not an identifier"},
		{"GET", "/apis/cms/v1/branches/branchDefault/objects/%2B1000", "", 400, "+1000"},
		{"POST", "/apis/index/v1/branches/%2B4/objects", `{}`, 400, "parameter branch: \"+4\" is not an identifier"},
		// Depths and sort keys are capped.
		{"GET", "/delivery/api/branches/4/objects?resolveDepth=100", "", 200, ""},
		{"GET", "/delivery/api/branches/4/objects?resolveDepth=101", "", 400, "resolveDepth must be between 0 and 100, got 101"},
		{"GET", "/delivery/api/branches/4/objects/4?resolveReverseDepth=-1", "", 400, "resolveReverseDepth must be between 0 and 100, got -1"},
		{"GET", "/delivery/api/branches/4/objects?sort=" + strings.Repeat("displayName,", 8) + "meta.id", "", 400, "sort takes at most 8 entries, got 9"},
		{"POST", "/apis/index/v1/branches/4/objects", `{"sortBy":[` + strings.TrimSuffix(strings.Repeat(`{"sortBy":1},`, 9), ",") + `]}`, 400, "sortBy takes at most 8 entries, got 9"},
		// Values the gateway cannot convert: plain words, no Go internals.
		{"GET", "/delivery/api/branches/4/objects?take=abc", "", 400, `parameter take: "abc" is not a whole number`},
		{"GET", "/delivery/api/branches/4/count?deleted=maybe", "", 400, `parameter deleted: "maybe" is not true or false`},
		{"GET", "/apis/cms/v1/comments/abc", "", 400, `parameter commentId: "abc" is not a whole number`},
		{"GET", "/apis/cms/v1/branches?take=99999999999", "", 400, `parameter take: "99999999999" is out of range`},
	}
	for _, tc := range cases {
		r := c.do(tc.method, tc.path, tc.body)
		if r.code != tc.want {
			t.Errorf("%s %s %s = %d, want %d: %s", tc.method, tc.path, tc.body, r.code, tc.want, r.body)
			continue
		}
		if tc.want < 400 {
			continue
		}
		var p struct {
			Status int
			Detail string
		}
		if err := json.Unmarshal(r.body, &p); err != nil || p.Status != tc.want ||
			!strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s %s: not ProblemDetails: %s", tc.method, tc.path, r.body)
			continue
		}
		if !strings.Contains(p.Detail, tc.detail) || strings.Contains(p.Detail, "strconv") {
			t.Errorf("%s %s: detail %q, want it to say %q in plain words", tc.method, tc.path, p.Detail, tc.detail)
		}
	}
}
