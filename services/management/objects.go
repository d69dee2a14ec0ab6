package management

import (
	"context"
	"net/http"

	"github.com/cmsplatform/cms/pkg/content"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GetObject implements Cms_GetObject (asOf: conditionalAt).
func (s *service) GetObject(ctx context.Context, req *managementv1.GetObjectRequest) (*managementv1.CmsObject, error) {
	o, err := readOptionsAt(ctx, req.GetInherited(), req.GetAttributes(), req.GetLanguages(), req.GetVariants(), req.AsOf)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	obj, err := s.content.GetObject(ctx, req.GetBranch(), req.GetId(), o)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(obj)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditionalAt(ctx, out, o.AsOf, obj.Version)
}

// GetObjects implements Cms_GetObjects (ids required, one page; asOf as
// GetObject).
func (s *service) GetObjects(ctx context.Context, req *managementv1.GetObjectsRequest) (*managementv1.CmsObjectList, error) {
	o, err := readOptionsAt(ctx, req.GetInherited(), req.GetAttributes(), req.GetLanguages(), req.GetVariants(), req.AsOf)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	objs, err := s.content.GetObjects(ctx, req.GetBranch(), content.SplitIdents(req.GetIds()), o)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObjectList(objs, "")
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditionalAt(ctx, out, o.AsOf, objectVersions(objs...)...)
}

// CreateObjects implements Cms_CreateObjects; success is 201.
func (s *service) CreateObjects(ctx context.Context, req *managementv1.CreateObjectsRequest) (*managementv1.CreateObjectsResponse, error) {
	if err := refuseIfMatch(ctx); err != nil {
		return nil, err
	}
	in, err := objectInputs(req.GetObjects())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	for i, o := range req.GetObjects() {
		if o.GetMeta().TypeRef == nil {
			// protojson reads null as absent; without this either would
			// silently create a type (typeRef 0).
			return nil, status.Errorf(codes.InvalidArgument, "objects[%d]: meta.typeRef is required to create an object (0 creates a type)", i)
		}
	}
	t, ids, err := s.content.CreateObjects(ctx, req.GetBranch(), change(ctx, req.GetComment()), in)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.CreateObjectsResponse{Transaction: toTransaction(t), CreatedObjectIds: make([]int32, len(ids))}
	for i, id := range ids {
		out.CreatedObjectIds[i] = int32(id)
	}
	_ = gateway.SetHTTPStatus(ctx, http.StatusCreated)
	return out, nil
}

// UpdateObjects implements Cms_UpdateObjects.
func (s *service) UpdateObjects(ctx context.Context, req *managementv1.UpdateObjectsRequest) (*managementv1.UpdateObjectsResponse, error) {
	in, err := objectInputs(req.GetObjects())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	res, err := s.content.UpdateObjects(ctx, req.GetBranch(), conditionalWrite(ctx, req.GetComment()), in)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.UpdateObjectsResponse{
		UpdatedObjects: int32(res.UpdatedObjects), CreatedValues: int32(res.CreatedValues),
		Transaction: toTransaction(res.Transaction),
	}, nil
}

// DeleteObjects implements Cms_DeleteObjects (soft delete).
func (s *service) DeleteObjects(ctx context.Context, req *managementv1.DeleteObjectsRequest) (*managementv1.DeleteObjectsResponse, error) {
	n, t, err := s.content.DeleteObjects(ctx, req.GetBranch(), conditionalWrite(ctx, req.GetComment()), req.GetObjectIds())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.DeleteObjectsResponse{DeletedObjects: int32(n), Transaction: toTransaction(t)}, nil
}

// GetTypedObjects implements Cms_GetTypedObjects.
func (s *service) GetTypedObjects(ctx context.Context, req *managementv1.GetTypedObjectsRequest) (*managementv1.CmsObjectList, error) {
	take, err := sentTake(req.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	o, err := readOptionsAt(ctx, req.GetInherited(), req.GetAttributes(), req.GetLanguages(), req.GetVariants(), req.AsOf)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	q := content.ListQuery{ReadOptions: o, Deleted: req.Deleted, Take: take, Continue: req.GetContinue()}
	page, err := s.content.GetTypedObjects(ctx, req.GetBranch(), req.GetType(), q)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObjectList(page.Objects, page.Continue)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditionalAt(ctx, out, q.AsOf, objectVersions(page.Objects...)...)
}
