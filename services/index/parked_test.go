package index

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// parkPending parks the pending outbox events instead of applying them
// (as the indexer does with an event that keeps failing) and returns the
// last parked transaction.
func (h *harness) parkPending(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	evs, err := h.st.ClaimOutbox(ctx, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("outbox: %d events, %v", len(evs), err)
	}
	var tx int64
	var done []int64
	for i, oe := range evs {
		if tx, err = h.ix.Park(ctx, indexdoc.ParkedEvent{Sequence: uint64(i + 1), Err: "rejected", Payload: oe.Payload}); err != nil {
			t.Fatal(err)
		}
		done = append(done, oe.ID)
	}
	if err := h.st.AckOutbox(ctx, done); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestMinChangeTrackingVersionIncludesParked: a request whose
// minChangeTrackingVersion includes a parked transaction answers 503 with
// Retry-After and a ProblemDetails naming that transaction (the index
// lacks its changes), even though later transactions were applied; one
// for a version before it answers; after the retry the same request
// answers with the parked change.
func TestMinChangeTrackingVersionIncludesParked(t *testing.T) {
	h := newHarness(t)
	before := h.sync()
	ctx := context.Background()
	ch := content.Change{Caller: &auth.Principal{Name: "editor"}}
	if _, _, err := h.svc.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: h.article}}); err != nil {
		t.Fatal(err)
	}
	parked := h.parkPending(t)
	if _, _, err := h.svc.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: h.article}}); err != nil {
		t.Fatal(err)
	}
	after := h.sync()
	count := func(minV int64) (int, http.Header, map[string]any) {
		t.Helper()
		resp, err := http.Post(h.url+"/branches/4/objectCount", "application/json", strings.NewReader(
			fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]},"minChangeTrackingVersion":%d,"maxWaitTime":"PT2S"}`, h.article, minV)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return resp.StatusCode, resp.Header, m
	}
	code, hdr, m := count(after)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" ||
		!strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") ||
		!strings.Contains(fmt.Sprint(m["detail"]), fmt.Sprintf("transaction %d ", parked)) {
		t.Fatalf("version %d including parked %d: %d Retry-After %q %v", after, parked, code, hdr.Get("Retry-After"), m)
	}
	// (The answer is at the current version: the object of the later
	// transaction is there, the parked one's is not.)
	if code, _, m := count(before); code != http.StatusOK || m["count"] != float64(4) {
		t.Fatalf("version %d before the parked one: %d %v", before, code, m)
	}
	res, err := h.ix.RetryParked(ctx, 0)
	if err != nil || len(res.Applied) != 1 || res.Applied[0].Transaction != parked {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	if code, _, m := count(after); code != http.StatusOK || m["count"] != float64(5) {
		t.Fatalf("after the retry: %d %v, want 5 objects", code, m)
	}
}
