package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Webhook delivery attempts are a log beside the content: pkg/webhooks
// appends one row per attempt and prunes old rows, Management lists them.
// They are written outside write transactions (recording an attempt is no
// change of the content, takes no transaction id and queues no event), so
// appending never waits for the transaction counter's lock of another
// process.

// WebhookLog keeps webhook delivery attempts, part of Store.
type WebhookLog interface {
	// AppendWebhookAttempts stores attempts (in one round trip where the
	// database allows) with increasing ids in the order given. An attempt
	// CheckWebhookAttempt refuses is ErrInvalidArgument and nothing is
	// stored.
	AppendWebhookAttempts(ctx context.Context, attempts []WebhookAttempt) error

	// ListWebhookAttempts returns the attempts of q.WebHook, newest (highest
	// id) first.
	ListWebhookAttempts(ctx context.Context, q WebhookAttemptQuery) ([]WebhookAttempt, error)

	// PruneWebhookAttempts deletes the attempts older than p.Before and,
	// for each of p.WebHooks, those beyond its p.Keep newest, at most
	// p.Limit rows in all (oldest first), and returns how many it deleted.
	// A non-positive Limit is ErrInvalidArgument: the work of one call is
	// bounded.
	PruneWebhookAttempts(ctx context.Context, p WebhookPrune) (int, error)
}

// Outcomes of a webhook attempt.
const (
	// WebhookAccepted: the receiver answered 2xx.
	WebhookAccepted = "accepted"
	// WebhookFailed: no answer, or not a 2xx; the delivery is retried.
	WebhookFailed = "failed"
	// WebhookGaveUp: a failed attempt after which the dispatcher gave the
	// delivery up (its give-up time had passed).
	WebhookGaveUp = "gave-up"
	// WebhookRefusedAddress: the receiver's address was refused (loopback,
	// private …); the delivery is retried like a failure.
	WebhookRefusedAddress = "refused-address"
)

// Bounds of the text columns of a webhook attempt.
const (
	MaxWebhookErrorBytes    = 1024
	MaxWebhookDeliveryBytes = 256
	MaxWebhookKindBytes     = 64
)

// WebhookAttempt is one delivery attempt of one event to one webhook.
type WebhookAttempt struct {
	ID int64 // set by the store, increasing
	// WebHook is the id of the webhook definition (an object of type 210).
	WebHook int64
	// Delivery is the delivery id (the X-Cms-Delivery header), the same
	// for every attempt of one event to one webhook.
	Delivery string
	// Transaction, Branch and Kind are the change event's.
	Transaction int64
	Branch      int64
	Kind        string
	// Attempt counts the attempts of this delivery, from 1.
	Attempt int
	// Time the attempt started (stored UTC, microseconds) and how long it
	// took (microseconds).
	Time     time.Time
	Duration time.Duration
	// Status is the receiver's HTTP status, 0 = no response.
	Status int
	// Error is why the attempt failed, "" when accepted.
	Error   string
	Outcome string
}

// WebhookAttemptQuery selects the attempts of one webhook, newest first.
type WebhookAttemptQuery struct {
	WebHook int64
	// BeforeID starts below this id (keyset paging: pass the last id
	// seen); 0 starts at the newest.
	BeforeID int64
	// Limit caps the result; <= 0 means no limit.
	Limit int
}

// WebhookPrune says which webhook attempts PruneWebhookAttempts deletes.
type WebhookPrune struct {
	// Before: attempts that started before it go (zero: none by age).
	Before time.Time
	// WebHooks keep their Keep newest attempts (Keep <= 0: no count
	// limit).
	WebHooks []int64
	Keep     int
	// Limit caps the rows one call deletes (required, > 0).
	Limit int
}

// CheckWebhookAttempt returns ErrInvalidArgument for an attempt the store
// does not store: a non-positive webhook id or attempt number, a negative
// status or duration, an unknown outcome or a text beyond its bound.
func CheckWebhookAttempt(a WebhookAttempt) error {
	switch {
	case a.WebHook <= 0:
		return fmt.Errorf("%w: webhook id %d must be positive", ErrInvalidArgument, a.WebHook)
	case a.Attempt <= 0:
		return fmt.Errorf("%w: attempt number %d must be positive", ErrInvalidArgument, a.Attempt)
	case a.Status < 0 || a.Duration < 0:
		return fmt.Errorf("%w: negative status or duration", ErrInvalidArgument)
	case !slices.Contains([]string{WebhookAccepted, WebhookFailed, WebhookGaveUp, WebhookRefusedAddress}, a.Outcome):
		return fmt.Errorf("%w: unknown webhook attempt outcome %q", ErrInvalidArgument, a.Outcome)
	case len(a.Error) > MaxWebhookErrorBytes || len(a.Delivery) > MaxWebhookDeliveryBytes || len(a.Kind) > MaxWebhookKindBytes:
		return fmt.Errorf("%w: webhook attempt text beyond its bound (error %d, delivery id %d, kind %d bytes)",
			ErrInvalidArgument, MaxWebhookErrorBytes, MaxWebhookDeliveryBytes, MaxWebhookKindBytes)
	}
	return nil
}
