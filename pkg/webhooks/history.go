package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/store"
)

// Bounds of a History listing (documented in docs/webhooks.md).
const (
	// DefaultTake is the page size when none is asked for.
	DefaultTake = 100
	// MaxTake is the largest page.
	MaxTake = 1000
)

// Errors of History: an id that is no webhook definition (404) and a
// continuation token no listing returned (400).
var (
	ErrNoWebhook = errkind.New(errkind.NotFound, "no such webhook")
	ErrBadPage   = errkind.New(errkind.Invalid, "invalid page")
)

// History reads the attempt log of webhooks.
type History struct {
	st store.Store
}

// NewHistory returns the attempt log reader of st.
func NewHistory(st store.Store) *History { return &History{st: st} }

// Branch returns the branch webhook definition id lives in: the default
// branch, for an object of type 210 there (deleted ones included: their
// attempts stay readable until pruned). Any other id is ErrNoWebhook.
func (h *History) Branch(ctx context.Context, id int64) (int64, error) {
	if id <= 0 {
		return 0, fmt.Errorf("%w: %d", ErrNoWebhook, id)
	}
	o, err := h.st.GetObject(ctx, content.BranchDefault, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, fmt.Errorf("%w: %d", ErrNoWebhook, id)
	case err != nil:
		return 0, err
	case o.TypeID != content.TypeWebHookDefinition:
		return 0, fmt.Errorf("%w: object %d is of type %d, not a webhook definition (%d)", ErrNoWebhook, id, o.TypeID, content.TypeWebHookDefinition)
	}
	return content.BranchDefault, nil
}

// Page is one page of a webhook's attempts, newest first.
type Page struct {
	Attempts []store.WebhookAttempt
	// Continue fetches the next page; "" on the last one.
	Continue string
}

// List returns the attempts of webhook id, newest first: take of them (nil
// = DefaultTake; outside 1..MaxTake is params.ErrInvalid) after the position of
// continuation token cont ("" = from the newest; a token is what an
// earlier page returned, anything else is ErrBadPage). An id that is no
// webhook definition is ErrNoWebhook.
func (h *History) List(ctx context.Context, id int64, take *int32, cont string) (Page, error) {
	n, err := params.Take("take", take, DefaultTake, MaxTake)
	if err != nil {
		return Page{}, err
	}
	var before int64
	if cont != "" {
		v, err := strconv.ParseInt(cont, 10, 64)
		if err != nil || v <= 0 {
			return Page{}, fmt.Errorf("%w: continue token %.40q is none this listing returned", ErrBadPage, cont)
		}
		before = v
	}
	if _, err := h.Branch(ctx, id); err != nil {
		return Page{}, err
	}
	rows, err := h.st.ListWebhookAttempts(ctx, store.WebhookAttemptQuery{WebHook: id, BeforeID: before, Limit: n + 1})
	if err != nil {
		return Page{}, err
	}
	var p Page
	if len(rows) > n {
		rows = rows[:n]
		p.Continue = strconv.FormatInt(rows[n-1].ID, 10)
	}
	p.Attempts = rows
	return p, nil
}
