package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// newWebhook defines a disabled webhook (it delivers nothing) as c and
// returns its id, for tests that only address it.
func newWebhook(c httpClient) int64 {
	c.t.Helper()
	return c.create(obj(210, "", v(1000, 201, "idle hook"), v(1220, 0, "https://receiver.invalid/hook"),
		v(1221, 0, "s"), v(1225, 0, false))).CreatedObjectIDs[0]
}

// attemptList is a GetWebhookDeliveries answer.
type attemptList struct {
	Count    int     `json:"count"`
	Continue *string `json:"continue"`
	Attempts []struct {
		ID          int64   `json:"id"`
		WebhookRef  int64   `json:"webhookRef"`
		DeliveryID  string  `json:"deliveryId"`
		Transaction int64   `json:"transaction"`
		BranchRef   int64   `json:"branchRef"`
		Kind        string  `json:"kind"`
		Attempt     int     `json:"attempt"`
		Time        string  `json:"time"`
		DurationMs  float64 `json:"durationMs"`
		Status      int     `json:"status"`
		Error       *string `json:"error"`
		Outcome     string  `json:"outcome"`
	} `json:"attempts"`
}

// deliveries reads a page of a webhook's attempts, checked against the
// served Management document (NovaDB's has no such operation).
func deliveries(c httpClient, hook int64, query string) attemptList {
	c.t.Helper()
	target := fmt.Sprintf("/apis/cms/v1/webhooks/%d/deliveries%s", hook, query)
	r := c.must(http.StatusOK, http.MethodGet, target, "")
	loadServedDoc(c.t, "Management").check(c.t, http.MethodGet, target, "", r)
	var out attemptList
	if err := json.Unmarshal(r.body, &out); err != nil || out.Count != len(out.Attempts) {
		c.t.Fatalf("deliveries answer %s: %v", r.body, err)
	}
	return out
}

// TestWebhookDeliveriesEmbedded: `cms run` records every attempt and
// Management lists them.
func TestWebhookDeliveriesEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.WebhookAllowPrivate = true
	cfg.WebhookGiveUp = 6 * time.Second
	runDeliveriesScenario(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

// TestWebhookDeliveriesDistributed: the webhooks target on its own
// records into PostgreSQL, Management (another process) lists.
func TestWebhookDeliveriesDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "hookattempts")
	mgmt := "http://" + startConfigured(t, config(TargetManagement)).HTTPAddr()
	hc := config(TargetWebhooks)
	hc.WebhookAllowPrivate = true
	hc.WebhookGiveUp = 6 * time.Second
	startConfigured(t, hc)
	runDeliveriesScenario(t, mgmt)
}

// runDeliveriesScenario: a receiver that fails each delivery twice, then
// accepts, shows three attempts of an event (503, 503, 200); a receiver
// that always fails shows the give-up; paging, bounds, 401, 403, 404.
func runDeliveriesScenario(t *testing.T, base string) {
	var mu sync.Mutex
	seen := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		mu.Lock()
		seen[r.Header.Get("X-Cms-Delivery")]++
		n := seen[r.Header.Get("X-Cms-Delivery")]
		mu.Unlock()
		if n <= 2 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	defer rcv.Close()
	admin := httpClient{t, base, "admin", "test-password"}
	typ := admin.create(obj(0, "audited", v(1000, 201, "Audited"))).CreatedObjectIDs[0]
	hooks := admin.create(
		obj(210, "", v(1000, 201, "flaky"), v(1220, 0, rcv.URL+"/flaky"), v(1221, 0, "k"), v(1225, 0, true)),
		obj(210, "", v(1000, 201, "down"), v(1220, 0, rcv.URL+"/down"), v(1221, 0, "k"), v(1225, 0, true), v(1223, 0, typ, 0)),
	).CreatedObjectIDs
	flaky, down := hooks[0], hooks[1]
	users := admin.create(
		obj(110, "", v(1100, 0, "hookreader"), v(1000, 201, "Hook reader"), v(1101, 0, "hookreader-pw"), v(1104, 0, 4)),
		obj(110, "", v(1100, 0, "hooknogrant"), v(1000, 201, "No grant"), v(1101, 0, "hooknogrant-pw")))
	w := admin.create(obj(typ, "", v(1000, 201, "audited object")))
	tx := w.Transaction.ID

	// The flaky hook: three attempts of the event, newest first.
	var list attemptList
	deadline := time.Now().Add(60 * time.Second)
	for {
		list = deliveries(admin, flaky, "?take=1000")
		var mine []int
		for i, a := range list.Attempts {
			if a.Transaction == tx {
				mine = append(mine, i)
			}
		}
		if len(mine) == 3 && list.Attempts[mine[0]].Outcome == "accepted" {
			for k, i := range mine {
				a := list.Attempts[i]
				wantStatus, wantOutcome := 503, "failed"
				if k == 0 {
					wantStatus, wantOutcome = 200, "accepted"
				}
				if a.Attempt != 3-k || a.Status != wantStatus || a.Outcome != wantOutcome || a.WebhookRef != flaky ||
					a.BranchRef != 4 || a.Kind != "created" || a.DeliveryID != list.Attempts[mine[0]].DeliveryID ||
					(a.Error == nil) != (k == 0) || a.DurationMs <= 0 {
					t.Errorf("attempt %d of transaction %d: %+v", 3-k, tx, a)
				}
				if at, err := time.Parse(time.RFC3339Nano, a.Time); err != nil || time.Since(at) > 5*time.Minute || time.Until(at) > time.Minute {
					t.Errorf("attempt %d: time %q (%v), want about now", 3-k, a.Time, err)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %d: no three attempts ending accepted at the flaky hook: %+v", tx, list)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The hook that is down gives the event up after webhookGiveUp.
	for {
		list = deliveries(admin, down, "")
		if len(list.Attempts) > 0 && list.Attempts[0].Outcome == "gave-up" {
			a := list.Attempts[0]
			if a.Transaction != tx || a.Status != 503 || a.Attempt != len(list.Attempts) || a.Error == nil {
				t.Errorf("give-up attempt %+v of %d attempts", a, len(list.Attempts))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no give-up recorded at the down hook: %+v", list)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Paging: take=1, then the rest after the token.
	first := deliveries(admin, flaky, "?take=1")
	if first.Count != 1 || first.Continue == nil {
		t.Fatalf("take=1: %+v", first)
	}
	rest := deliveries(admin, flaky, "?take=1000&continue="+*first.Continue)
	all := deliveries(admin, flaky, "?take=1000")
	if rest.Count != all.Count-1 || rest.Attempts[0].ID != all.Attempts[1].ID || rest.Continue != nil {
		t.Fatalf("after the token: %d attempts from %d, want %d from %d and no token", rest.Count, rest.Attempts[0].ID, all.Count-1, all.Attempts[1].ID)
	}

	// Bounds, unknown ids, authorization: ProblemDetails as the served
	// document declares them.
	doc := loadServedDoc(t, "Management")
	for _, q := range []string{"?take=0", "?take=1001", "?take=-1", "?continue=abc", "?continue=-5", "?take=x"} {
		target := fmt.Sprintf("/apis/cms/v1/webhooks/%d/deliveries%s", flaky, q)
		r := admin.do(http.MethodGet, target, "")
		if r.code != http.StatusBadRequest {
			t.Errorf("%s: %d %s %s, want 400 ProblemDetails", q, r.code, r.header.Get("Content-Type"), r.body)
		}
		doc.checkAnswer(t, http.MethodGet, target, "", r)
	}
	refused := func(c httpClient, want int, hook int64) {
		t.Helper()
		target := fmt.Sprintf("/apis/cms/v1/webhooks/%d/deliveries", hook)
		doc.check(t, http.MethodGet, target, "", c.must(want, http.MethodGet, target, ""))
	}
	for _, id := range []int64{999999, typ, users.CreatedObjectIDs[0]} {
		refused(admin, http.StatusNotFound, id)
	}
	refused(httpClient{t, base, "", ""}, http.StatusUnauthorized, flaky)
	nogrant := httpClient{t, base, "hooknogrant", "hooknogrant-pw"}
	refused(nogrant, http.StatusForbidden, flaky)
	refused(nogrant, http.StatusNotFound, typ)
	reader := httpClient{t, base, "hookreader", "hookreader-pw"}
	if got := deliveries(reader, flaky, "?take=1000"); got.Count != all.Count {
		t.Errorf("a reader of the default branch sees %d attempts, the administrator %d", got.Count, all.Count)
	}
}
