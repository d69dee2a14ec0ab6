package events

import (
	"context"

	"github.com/cmsplatform/cms/pkg/component"
)

// PublisherWithDeadline bounds every Publish of p with g's deadline and
// reports an unreachable or slow stream as component.ErrUnavailable (the
// outbox relay then keeps the row and retries).
func PublisherWithDeadline(p Publisher, g component.Guard) Publisher {
	return deadlinePublisher{p: p, g: g}
}

type deadlinePublisher struct {
	p Publisher
	g component.Guard
}

func (d deadlinePublisher) Publish(ctx context.Context, e Event) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.p.Publish(ctx, e) })
}
