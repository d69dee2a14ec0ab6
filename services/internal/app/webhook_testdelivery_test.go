package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/webhooks"
)

// TestWebhookTestDelivery: an administrator's POST /webhooks/{id}/test
// reaches the receiver signed with the webhook's secret (also while it is
// disabled), answers the attempt as the log records it, and shows in the
// log; a receiver's refusal is the attempt's error; no URL is 400, no
// definition 404, another user 403, no credentials 401.
func TestWebhookTestDelivery(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.WebhookAllowPrivate = true // the receiver is on loopback
	base := "http://" + startConfigured(t, cfg).HTTPAddr()

	const secret = "s3cret-for-tests"
	var mu sync.Mutex
	var got []webhooks.Payload
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err := webhooks.Verify([]byte(secret), r.Header.Get(webhooks.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p webhooks.Payload
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}))
	defer rcv.Close()

	admin := httpClient{t, base, "admin", "test-password"}
	ids := admin.create(
		obj(210, "", v(1000, 201, "tested"), v(1220, 0, rcv.URL+"/in"), v(1221, 0, secret), v(1225, 0, false)),
		obj(210, "", v(1000, 201, "wrong secret"), v(1220, 0, rcv.URL+"/in"), v(1221, 0, "other"), v(1225, 0, true)),
		obj(210, "", v(1000, 201, "no url"), v(1225, 0, false)),
		obj(110, "", v(1100, 0, "testreader"), v(1000, 201, "Reader"), v(1101, 0, "testreader-pw"), v(1104, 0, 4)),
	).CreatedObjectIDs
	hook, wrong, noURL := ids[0], ids[1], ids[2]
	doc := loadServedDoc(t, "Management")
	send := func(c httpClient, want int, id int64) httpResult {
		t.Helper()
		target := fmt.Sprintf("/apis/cms/v1/webhooks/%d/test", id)
		r := c.must(want, http.MethodPost, target, "{}")
		doc.check(t, http.MethodPost, target, "{}", r)
		return r
	}
	type attempt struct {
		ID         int64   `json:"id"`
		WebhookRef int64   `json:"webhookRef"`
		DeliveryID string  `json:"deliveryId"`
		Kind       string  `json:"kind"`
		DurationMs float64 `json:"durationMs"`
		Status     int     `json:"status"`
		Error      *string `json:"error"`
		Outcome    string  `json:"outcome"`
	}
	var a attempt
	if err := json.Unmarshal(send(admin, http.StatusOK, hook).body, &a); err != nil {
		t.Fatal(err)
	}
	if a.ID <= 0 || a.WebhookRef != hook || a.Kind != "test" || a.Status != 200 || a.Error != nil || a.Outcome != "accepted" ||
		a.DurationMs <= 0 || !strings.HasPrefix(a.DeliveryID, "test-") {
		t.Errorf("test delivery answered %+v", a)
	}
	mu.Lock()
	if len(got) != 1 || got[0].ID != a.DeliveryID || got[0].Event.Kind != "test" {
		t.Errorf("receiver got %+v, want the test delivery %s", got, a.DeliveryID)
	}
	mu.Unlock()
	if log := deliveries(admin, hook, ""); log.Count != 1 || log.Attempts[0].ID != a.ID {
		t.Errorf("the log holds %+v, want the test attempt %d", log, a.ID)
	}

	var refused attempt
	_ = json.Unmarshal(send(admin, http.StatusOK, wrong).body, &refused)
	if refused.Status != 401 || refused.Outcome != "failed" || refused.Error == nil || !strings.Contains(*refused.Error, "401") {
		t.Errorf("refused signature answered %+v", refused)
	}

	send(admin, http.StatusBadRequest, noURL)
	send(admin, http.StatusNotFound, 999999)
	send(admin, http.StatusNotFound, ids[3]) // a user, not a webhook
	send(httpClient{t, base, "testreader", "testreader-pw"}, http.StatusForbidden, hook)
	send(httpClient{t, base, "", ""}, http.StatusUnauthorized, hook)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Errorf("receiver got %d deliveries, want only the administrator's first test", len(got))
	}
}
