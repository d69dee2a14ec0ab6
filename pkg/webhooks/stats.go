package webhooks

import (
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/store"
)

// Stats are a dispatcher's counters since it was made: delivery attempts
// by outcome, as the attempt log records them.
type Stats struct {
	Accepted, Failed, GaveUp, RefusedAddress int64
}

// outcomeCounts counts attempts by their recorded outcome.
type outcomeCounts struct {
	accepted, failed, gaveUp, refused atomic.Int64
}

func (c *outcomeCounts) count(outcome string) {
	switch outcome {
	case store.WebhookAccepted:
		c.accepted.Add(1)
	case store.WebhookGaveUp:
		c.gaveUp.Add(1)
	case store.WebhookRefusedAddress:
		c.refused.Add(1)
	default:
		c.failed.Add(1)
	}
}

// Stats returns the dispatcher's attempt counts by outcome.
func (d *Dispatcher) Stats() Stats {
	return Stats{Accepted: d.outcomes.accepted.Load(), Failed: d.outcomes.failed.Load(),
		GaveUp: d.outcomes.gaveUp.Load(), RefusedAddress: d.outcomes.refused.Load()}
}
