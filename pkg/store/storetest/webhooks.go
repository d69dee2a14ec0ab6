package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// testWebhookAttempts checks the webhook attempt log: a batch round trip
// (every field, ids increasing in the order given), the listing per
// webhook newest first with keyset paging, validation, and pruning by age
// and by count within the row budget.
func testWebhookAttempts(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	base := time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC)
	attempt := func(hook int64, n int, at time.Time, outcome string) store.WebhookAttempt {
		a := store.WebhookAttempt{WebHook: hook, Delivery: "tx-7-" + string(rune('a'+hook%26)), Transaction: 7, Branch: 4,
			Kind: "updated", Attempt: n, Time: at, Duration: 1500 * time.Microsecond, Status: 503,
			Error: "receiver answered 503 Service Unavailable", Outcome: outcome}
		if outcome == store.WebhookAccepted {
			a.Status, a.Error = 200, ""
		}
		return a
	}
	// 75 attempts of hook 11 (64 + 8 + 1 + 1 + 1 rows: every statement
	// size), interleaved with 3 of hook 12.
	var batch []store.WebhookAttempt
	for i := range 75 {
		batch = append(batch, attempt(11, i+1, base.Add(time.Duration(i)*time.Minute), store.WebhookFailed))
		if i%30 == 0 {
			batch = append(batch, attempt(12, i/30+1, base.Add(time.Duration(i)*time.Minute), store.WebhookAccepted))
		}
	}
	must(t, s.AppendWebhookAttempts(ctx, batch))
	must(t, s.AppendWebhookAttempts(ctx, nil))

	got, err := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 12})
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("hook 12: %d attempts, want 3: %+v", len(got), got)
	}
	want := attempt(12, 3, base.Add(60*time.Minute), store.WebhookAccepted)
	want.ID = got[0].ID
	want.Time = want.Time.Truncate(time.Microsecond)
	if got[0] != want {
		t.Fatalf("newest attempt of hook 12 =\n%+v, want\n%+v", got[0], want)
	}
	if !(got[0].ID > got[1].ID && got[1].ID > got[2].ID) || got[2].Attempt != 1 {
		t.Fatalf("hook 12 not newest first: %+v", got)
	}
	all, err := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 11})
	must(t, err)
	if len(all) != 75 || all[0].Attempt != 75 || all[74].Attempt != 1 {
		t.Fatalf("hook 11: %d attempts, first %d, last %d; want 75 from 75 down to 1", len(all), all[0].Attempt, all[len(all)-1].Attempt)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID || all[i].Attempt != all[i-1].Attempt-1 {
			t.Fatalf("hook 11 out of order at %d: %d after %d", i, all[i].Attempt, all[i-1].Attempt)
		}
	}
	page, err := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 11, BeforeID: all[9].ID, Limit: 5})
	must(t, err)
	if len(page) != 5 || page[0].ID != all[10].ID || page[4].ID != all[14].ID {
		t.Fatalf("page below the 10th: %d attempts from %d, want 5 from %d", len(page), page[0].ID, all[10].ID)
	}
	none, err := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 13})
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("hook 13 has %d attempts", len(none))
	}

	for name, bad := range map[string]store.WebhookAttempt{
		"no webhook": attempt(0, 1, base, store.WebhookFailed),
		"attempt 0":  attempt(11, 0, base, store.WebhookFailed),
		"outcome":    attempt(11, 1, base, "lost"),
		"long error": func() store.WebhookAttempt {
			a := attempt(11, 1, base, store.WebhookFailed)
			a.Error = strings.Repeat("x", 1025)
			return a
		}(),
		"long delivery": func() store.WebhookAttempt {
			a := attempt(11, 1, base, store.WebhookFailed)
			a.Delivery = strings.Repeat("x", 257)
			return a
		}(),
	} {
		mustBe(t, s.AppendWebhookAttempts(ctx, []store.WebhookAttempt{attempt(11, 99, base, store.WebhookFailed), bad}), store.ErrInvalidArgument, name)
	}
	if again, _ := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 11}); len(again) != 75 {
		t.Fatalf("a refused batch stored something: %d attempts", len(again))
	}

	_, err = s.PruneWebhookAttempts(ctx, store.WebhookPrune{Keep: 1, WebHooks: []int64{11}})
	mustBe(t, err, store.ErrInvalidArgument, "prune without limit")
	// By age: the attempts before minute 10 (10 of hook 11, 1 of hook 12),
	// at most 4 per call.
	n, err := s.PruneWebhookAttempts(ctx, store.WebhookPrune{Before: base.Add(10 * time.Minute), Limit: 4})
	must(t, err)
	if n != 4 {
		t.Fatalf("pruned %d by age, want the limit 4", n)
	}
	for range 3 {
		_, err = s.PruneWebhookAttempts(ctx, store.WebhookPrune{Before: base.Add(10 * time.Minute), Limit: 4})
		must(t, err)
	}
	left, err := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 11})
	must(t, err)
	if len(left) != 65 || left[64].Attempt != 11 {
		t.Fatalf("after pruning by age hook 11 keeps %d attempts down to %d, want 65 down to 11", len(left), left[len(left)-1].Attempt)
	}
	if h12, _ := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 12}); len(h12) != 2 {
		t.Fatalf("after pruning by age hook 12 keeps %d attempts, want 2", len(h12))
	}
	// By count: hook 11 keeps its 20 newest; the budget of 30 leaves 15.
	n, err = s.PruneWebhookAttempts(ctx, store.WebhookPrune{WebHooks: []int64{11, 12}, Keep: 20, Limit: 30})
	must(t, err)
	if n != 30 {
		t.Fatalf("pruned %d by count, want the limit 30", n)
	}
	n, err = s.PruneWebhookAttempts(ctx, store.WebhookPrune{WebHooks: []int64{11, 12}, Keep: 20, Limit: 30})
	must(t, err)
	if n != 15 {
		t.Fatalf("second pass pruned %d, want the remaining 15", n)
	}
	left, err = s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 11})
	must(t, err)
	if len(left) != 20 || left[0].Attempt != 75 || left[19].Attempt != 56 {
		t.Fatalf("after pruning by count hook 11 keeps %d attempts, want its 20 newest (75 down to 56)", len(left))
	}
	if h12, _ := s.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: 12}); len(h12) != 2 {
		t.Fatalf("hook 12 (below its count) keeps %d attempts, want 2", len(h12))
	}
}
