package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/store"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// GetWebhookDeliveries implements Webhook_GetWebhookDeliveries (ours, not
// NovaDB's): a webhook's recorded delivery attempts, newest first, with
// the continuation token in "continue" (null on the last page). The
// interceptor checks read on the definition's branch (OwnerBranch).
func (s *service) GetWebhookDeliveries(ctx context.Context, req *managementv1.GetWebhookDeliveriesRequest) (*managementv1.WebhookAttemptList, error) {
	if s.webhooks == nil {
		return s.UnimplementedManagementServiceServer.GetWebhookDeliveries(ctx, req)
	}
	page, err := s.webhooks.List(ctx, req.GetWebhookId(), req.Take, req.GetContinue())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.WebhookAttemptList{Count: int32(len(page.Attempts)), Attempts: make([]*managementv1.WebhookAttempt, len(page.Attempts))}
	if page.Continue != "" {
		out.Continue = &page.Continue
	}
	for i, a := range page.Attempts {
		out.Attempts[i] = attemptOut(a)
	}
	return out, nil
}

// SendTestDelivery implements Webhook_SendTestDelivery (ours): one test
// delivery sent now, answered as its recorded attempt. The interceptor
// lets administrators only through.
func (s *service) SendTestDelivery(ctx context.Context, req *managementv1.SendTestDeliveryRequest) (*managementv1.WebhookAttempt, error) {
	if s.webhookTests == nil {
		return s.UnimplementedManagementServiceServer.SendTestDelivery(ctx, req)
	}
	a, err := s.webhookTests.Send(ctx, req.GetWebhookId())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return attemptOut(a), nil
}

func attemptOut(a store.WebhookAttempt) *managementv1.WebhookAttempt {
	out := &managementv1.WebhookAttempt{
		Id: a.ID, WebhookRef: a.WebHook, DeliveryId: a.Delivery, Transaction: a.Transaction, BranchRef: a.Branch,
		Kind: a.Kind, Attempt: int32(a.Attempt), Time: timestamppb.New(a.Time),
		DurationMs: float64(a.Duration.Microseconds()) / 1000, Status: int32(a.Status), Outcome: a.Outcome,
	}
	if a.Error != "" {
		out.Error = &a.Error
	}
	return out
}
