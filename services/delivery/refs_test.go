package delivery

import (
	"encoding/json"
	"testing"
)

// TestListsAlwaysCarryRefs: every list answer has "refs" ([] when nothing
// was resolved), so a site's data.refs.find(...) never fails; a single
// object omits it unless something was resolved, as NovaDB's own answers
// do.
func TestListsAlwaysCarryRefs(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{
		"/branches/4/types/webPage/objects?take=5",
		"/branches/4/objects?filter=meta.type=module",
		"/branches/4/types/webPage/objects?filter=displayName:nothingmatches",
		"/branches/4/types/webPage/objects?resolve=imageRef", // the pages have no image: nothing resolved
	} {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(h.get(t, 200, path).body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body["refs"]) != "[]" {
			t.Errorf("%s: refs = %s, want []", path, body["refs"])
		}
	}
	var withRefs map[string]json.RawMessage
	if err := json.Unmarshal(h.get(t, 200, "/branches/4/types/webPage/objects?resolve=moduleRefs").body, &withRefs); err != nil {
		t.Fatal(err)
	}
	var refs []json.RawMessage
	if err := json.Unmarshal(withRefs["refs"], &refs); err != nil || len(refs) == 0 {
		t.Errorf("resolved list: refs = %s", withRefs["refs"])
	}
	for _, path := range []string{"/branches/4/objects/home", "/branches/4/types/webPage/objects/home"} {
		var single map[string]json.RawMessage
		if err := json.Unmarshal(h.get(t, 200, path).body, &single); err != nil {
			t.Fatal(err)
		}
		if r, ok := single["refs"]; ok {
			t.Errorf("%s: refs = %s on a single object without anything resolved", path, r)
		}
	}
}
