package webhooks

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// A test delivery reaches the receiver signed with the webhook's secret,
// carries the test kind, is recorded in the webhook's log with the id the
// log gave it, and goes out whether or not the webhook is enabled; a
// failing receiver's answer is the attempt's error, a refused address is
// refused; ids that are no live definition are ErrNoWebhook, a definition
// without a URL ErrNoURL.
func TestTestDelivery(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "test-secret")
		typ := e.create(t, objectOf(content.RootID, "Plain"))[0]
		ids := e.create(t, hook(rcv.srv.URL+"/ok", "test-secret", vin(content.AttrWebHookEnabled, false)),
			hook(rcv.srv.URL+"/ok", "wrong-secret"), content.ObjectInput{TypeID: content.TypeWebHookDefinition,
				Values: []content.ValueInput{vin(content.AttrName, "no url")}})
		good, badSecret, noURL := ids[0], ids[1], ids[2]
		tester := NewTester(e.st, ClientSettings{AllowPrivate: true})

		a, err := tester.Send(t.Context(), good)
		if err != nil {
			t.Fatal(err)
		}
		if a.Outcome != store.WebhookAccepted || a.Status != 200 || a.Error != "" || a.ID <= 0 || a.Kind != KindTest ||
			a.Attempt != 1 || !strings.HasPrefix(a.Delivery, "test-") || a.Duration <= 0 {
			t.Errorf("accepted test delivery recorded as %+v", a)
		}
		got := rcv.payloads("/ok")
		if len(got) != 1 || got[0].ID != a.Delivery || got[0].WebHook != good || got[0].Event.Kind != KindTest ||
			len(got[0].Event.ObjectIDs) != 1 || got[0].Event.ObjectIDs[0] != good {
			t.Errorf("receiver got %+v, want one test payload %s", got, a.Delivery)
		}
		log := attempts(t, e, good)
		if len(log) != 1 || log[0].ID != a.ID || log[0].Delivery != a.Delivery {
			t.Errorf("log of the webhook: %+v, want the test attempt %d", log, a.ID)
		}

		// The receiver refuses the signature of another secret: 401 is the attempt's error.
		a, err = tester.Send(t.Context(), badSecret)
		if err != nil {
			t.Fatal(err)
		}
		if a.Outcome != store.WebhookFailed || a.Status != 401 || !strings.Contains(a.Error, "401") {
			t.Errorf("refused signature recorded as %+v", a)
		}

		// Without AllowPrivate the loopback receiver is refused.
		a, err = NewTester(e.st, ClientSettings{}).Send(t.Context(), good)
		if err != nil {
			t.Fatal(err)
		}
		if a.Outcome != store.WebhookRefusedAddress || a.Status != 0 || !strings.Contains(a.Error, "not a public address") {
			t.Errorf("refused address recorded as %+v", a)
		}

		if _, err := tester.Send(t.Context(), noURL); !errors.Is(err, ErrNoURL) {
			t.Errorf("no URL: %v, want ErrNoURL", err)
		}
		for _, id := range []int64{0, -1, typ, 1 << 40} {
			if _, err := tester.Send(t.Context(), id); !errors.Is(err, ErrNoWebhook) {
				t.Errorf("id %d: %v, want ErrNoWebhook", id, err)
			}
		}
		if _, _, err := e.content.DeleteObjects(t.Context(), "4", admin, []string{strconv.FormatInt(good, 10)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tester.Send(t.Context(), good); !errors.Is(err, ErrNoWebhook) {
			t.Errorf("deleted definition: %v, want ErrNoWebhook", err)
		}
	})
}
