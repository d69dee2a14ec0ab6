package delivery

import (
	"context"
	"testing"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestFuzzySuggestionsHTTP: fuzzy, fuzzyMinSimilarity and
// fuzzyPrefixLength reach the domain through the gateway; out-of-range
// values are 400 ProblemDetails (InvalidArgument over gRPC), and are
// ignored without fuzzy.
func TestFuzzySuggestionsHTTP(t *testing.T) {
	h := newHarnessOpts(t, nil, false)
	const base = "/branches/4/types/webPage/suggestions?fields=displayName,navigationTitle&"
	for _, c := range []struct{ query, want string }{
		// "hxmx" is 2 edits from "home" (Home's name and navigation title):
		// similarity 0.5, not above the default 0.5, above 0.4.
		{"pattern=hxmx&fuzzy=true", `{"suggestions":[]}`},
		{"pattern=hxmx&fuzzy=true&fuzzyMinSimilarity=0.4", `{"suggestions":[{"count":2,"length":0,"value":"home"}]}`},
		{"pattern=hme&fuzzy=true", `{"suggestions":[{"count":2,"length":1,"value":"home"}]}`},
		// A common prefix of 1: "jome" does not start with "h".
		{"pattern=jome&fuzzy=true", `{"suggestions":[{"count":2,"length":0,"value":"home"}]}`},
		{"pattern=jome&fuzzy=true&fuzzyPrefixLength=1", `{"suggestions":[]}`},
		// Without fuzzy the parameters are ignored, even out of range.
		{"pattern=ho&fuzzyMinSimilarity=5&fuzzyPrefixLength=-1", `{"suggestions":[{"count":2,"length":2,"value":"home"}]}`},
	} {
		if got := mustJSON(decode(t, h.get(t, 200, base+c.query).body)); got != c.want {
			t.Errorf("%s = %s, want %s", c.query, got, c.want)
		}
	}
	for _, q := range []string{"fuzzyMinSimilarity=1", "fuzzyMinSimilarity=-0.5", "fuzzyPrefixLength=-1"} {
		h.get(t, 400, base+"pattern=hme&fuzzy=true&"+q) // fails unless a ProblemDetails
		h.get(t, 400, "/branches/4/suggestions?fields=displayName&pattern=hme&fuzzy=true&"+q)
	}
	fuzzy, sim := true, float32(1.5)
	_, err := h.client.Suggestions(context.Background(), &deliveryv1.SuggestionsRequest{Branch: "4", Pattern: "hme",
		Fields: "displayName", Fuzzy: &fuzzy, FuzzyMinSimilarity: &sim})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("gRPC fuzzyMinSimilarity 1.5: %v, want InvalidArgument", err)
	}
}

// TestOccurrencesFallbackHTTP: in de-DE, About us (en-US only) counts
// under its en-US name, as rendering shows it.
func TestOccurrencesFallbackHTTP(t *testing.T) {
	h := newHarnessOpts(t, nil, false)
	got := mustJSON(decode(t, h.get(t, 200, "/branches/4/types/webPage/occurrences?fields=displayName&lang=de-DE").body))
	want := `{"occurrences":{"displayName":{"more":false,"notNullOccurrences":3,"nullOccurrences":0,"valueOccurrences":[` +
		`{"count":1,"value":"About us"},{"count":1,"value":"Nur Deutsch"},{"count":1,"value":"Startseite"}],"valueType":"string"}}}`
	if got != want {
		t.Fatalf("occurrences = %s\nwant %s", got, want)
	}
}
