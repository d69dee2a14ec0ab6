package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// TestReadYourWritesParked: X-Cms-Min-Version for a transaction the
// indexer parked answers 503 with Retry-After and a ProblemDetails naming
// it at once (the version is recorded, its changes are not in the index),
// instead of the object as it was before; after the retry the same request
// answers with the change.
func TestReadYourWritesParked(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	path := "/branches/4/objects/" + strconv.FormatInt(h.site.About, 10)
	h.get(t, 200, path)
	tx := h.rename(t, h.site.About, "About parked")
	evs, err := h.site.Store.ClaimOutbox(ctx, 100)
	if err != nil || len(evs) != 1 {
		t.Fatalf("outbox: %d, %v", len(evs), err)
	}
	if _, err := h.site.Index.Park(ctx, indexdoc.ParkedEvent{Sequence: 1, Err: "rejected", Payload: evs[0].Payload}); err != nil {
		t.Fatal(err)
	}
	if err := h.site.Store.AckOutbox(ctx, []int64{evs[0].ID}); err != nil {
		t.Fatal(err)
	}
	r := h.get(t, 503, path, "X-Cms-Min-Version", strconv.FormatInt(tx, 10), "X-Cms-Max-Wait", "5s")
	var pd struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(r.body, &pd); err != nil || pd.Status != 503 || !strings.Contains(pd.Detail, fmt.Sprintf("transaction %d ", tx)) {
		t.Fatalf("parked: %s (%v), want a 503 naming transaction %d", r.body, err, tx)
	}
	if ra := r.header.Get("Retry-After"); ra != gateway.ParkedRetryAfterSeconds {
		t.Errorf("parked: Retry-After %q, want %q", ra, gateway.ParkedRetryAfterSeconds)
	}
	h.get(t, 200, path, "X-Cms-Min-Version", strconv.FormatInt(tx-1, 10)) // before it
	if res, err := h.site.Index.RetryParked(ctx, tx); err != nil || len(res.Applied) != 1 {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	r = h.get(t, 200, path, "X-Cms-Min-Version", strconv.FormatInt(tx, 10))
	if !strings.Contains(string(r.body), "About parked") {
		t.Fatalf("after the retry: %s", r.body)
	}
}
