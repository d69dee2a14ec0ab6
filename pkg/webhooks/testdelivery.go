package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/store"
)

// KindTest is the kind of the event a test delivery carries: no change
// event has it, so a receiver tells a test from a change by it.
const KindTest = "test"

// ErrNoURL is a definition without a URL to send a test delivery to.
var ErrNoURL = errkind.New(errkind.Invalid, "the webhook has no URL")

// Tester sends test deliveries: one signed POST of a test event to a
// webhook's URL now, whatever its filters and whether it is enabled,
// recorded in its delivery log like any attempt. It uses the client
// settings of the dispatcher (timeout, response cap, the address check).
type Tester struct {
	st     store.Store
	client *Client
	now    func() time.Time
}

// NewTester returns the tester of the definitions in st, sending with
// settings (zero values take defaults).
func NewTester(st store.Store, settings ClientSettings) *Tester {
	return &Tester{st: st, client: NewClient(settings), now: time.Now}
}

// Send sends one test delivery to webhook id and returns its recorded
// attempt (its ID is the log's, 0 if the log could not be read back).
// The event is {branch: 4, transaction: 0, objectIds: [id], kind: "test"};
// the delivery id is "test-<unix nanoseconds>-<id>". An id that is no live
// webhook definition is ErrNoWebhook; one without a URL ErrNoURL. A
// receiver's refusal or an unreachable one is no error: the attempt says
// so (status, error, outcome), as the log does. The attempt is not retried.
func (t *Tester) Send(ctx context.Context, id int64) (store.WebhookAttempt, error) {
	def, err := t.definition(ctx, id)
	if err != nil {
		return store.WebhookAttempt{}, err
	}
	now := t.now()
	ev := changes.Event{Branch: content.BranchDefault, ObjectIDs: []int64{id}, Kind: KindTest}
	p := Payload{ID: fmt.Sprintf("test-%d-%d", now.UnixNano(), id), WebHook: id, Event: ev}
	body, err := json.Marshal(p)
	if err != nil {
		return store.WebhookAttempt{}, err
	}
	a := t.client.Deliver(ctx, def.URL, def.Secret, body, p.ID, now)
	rec := attemptRecord(id, p.ID, ev, 1, a, false)
	if err := t.st.AppendWebhookAttempts(context.WithoutCancel(ctx), []store.WebhookAttempt{rec}); err != nil {
		return store.WebhookAttempt{}, fmt.Errorf("webhooks: record the test delivery: %w", err)
	}
	// The log assigns the id; the newest rows of this webhook hold it
	// (deliveries of its lane may have been recorded meanwhile).
	rows, err := t.st.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: id, Limit: 50})
	if err == nil {
		for _, r := range rows {
			if r.Delivery == rec.Delivery {
				return r, nil
			}
		}
	}
	return rec, nil
}

// definition reads the live definition id (with its secret) from the store.
func (t *Tester) definition(ctx context.Context, id int64) (Definition, error) {
	if id <= 0 {
		return Definition{}, fmt.Errorf("%w: %d", ErrNoWebhook, id)
	}
	o, err := t.st.GetObject(ctx, content.BranchDefault, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Definition{}, fmt.Errorf("%w: %d", ErrNoWebhook, id)
	case err != nil:
		return Definition{}, err
	case o.TypeID != content.TypeWebHookDefinition || o.Deleted:
		return Definition{}, fmt.Errorf("%w: object %d is no live webhook definition (type %d)", ErrNoWebhook, id, content.TypeWebHookDefinition)
	}
	vals, err := t.st.ListValues(ctx, content.BranchDefault, []int64{id}, store.ValueFilter{AttributeIDs: definitionAttributes})
	if err != nil {
		return Definition{}, err
	}
	d := Definition{ID: id, CreatedTx: o.CreatedTx}
	for _, v := range vals {
		d.fill(v)
	}
	if d.URL == "" {
		return Definition{}, fmt.Errorf("%w: set webHookUrl (attribute %d) first", ErrNoURL, content.AttrWebHookURL)
	}
	return d, nil
}
