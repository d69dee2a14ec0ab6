package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/params"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetObjectHistory implements Cms_GetObjectHistory (ours, not NovaDB's):
// the transactions that changed the object on the branch, newest first,
// with the continuation token in "continue" (null on the last page).
func (s *service) GetObjectHistory(ctx context.Context, req *managementv1.GetObjectHistoryRequest) (*managementv1.ObjectHistory, error) {
	take, err := params.Take("take", req.Take, content.DefaultHistoryTake, content.MaxHistoryTake)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	p := caller(ctx)
	page, err := s.content.ObjectHistory(ctx, req.GetBranch(), req.GetObject(),
		content.HistoryQuery{Caller: &p, Take: take, Continue: req.GetContinue()})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.ObjectHistory{Count: int32(len(page.Entries)),
		Entries: make([]*managementv1.ObjectHistoryEntry, len(page.Entries))}
	if page.Continue != "" {
		out.Continue = &page.Continue
	}
	for i, e := range page.Entries {
		pe := &managementv1.ObjectHistoryEntry{Transaction: toTransaction(e.Transaction), Kind: e.Kind,
			Changes: make([]*managementv1.ValueChange, len(e.Changes))}
		for j, c := range e.Changes {
			pc := &managementv1.ValueChange{Attribute: int32(c.Attribute), Language: int32(c.Language), Variant: int32(c.Variant)}
			if pc.OldValues, err = toValues(c.Old); err != nil {
				return nil, s.toStatus(ctx, err)
			}
			if pc.NewValues, err = toValues(c.New); err != nil {
				return nil, s.toStatus(ctx, err)
			}
			pe.Changes[j] = pc
		}
		out.Entries[i] = pe
	}
	return out, nil
}

// RevertObject implements Cms_RevertObject (ours): one object, If-Match
// honoured.
func (s *service) RevertObject(ctx context.Context, req *managementv1.RevertObjectRequest) (*managementv1.RevertObjectsResponse, error) {
	return s.revert(ctx, req.GetBranch(), conditionalWrite(ctx, req.GetComment()), content.RevertInput{
		Objects: []string{req.GetObject()}, Transaction: req.GetTransaction(), Attributes: req.GetAttributes()})
}

// RevertObjects implements Cms_RevertObjects (ours): several objects in
// one transaction.
func (s *service) RevertObjects(ctx context.Context, req *managementv1.RevertObjectsRequest) (*managementv1.RevertObjectsResponse, error) {
	return s.revert(ctx, req.GetBranch(), conditionalWrite(ctx, req.GetComment()), content.RevertInput{
		Objects: req.GetObjectIds(), Transaction: req.GetTransaction(), Attributes: req.GetAttributes()})
}

func (s *service) revert(ctx context.Context, branch string, ch content.Change, in content.RevertInput) (*managementv1.RevertObjectsResponse, error) {
	res, err := s.content.RevertObjects(ctx, branch, ch, in)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.RevertObjectsResponse{RevertedObjects: int32(res.RevertedObjects),
		Transaction: toTransaction(res.Transaction)}, nil
}
