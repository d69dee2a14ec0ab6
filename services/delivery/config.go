package delivery

import (
	"context"
	"fmt"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// GetBranches implements Delivery_GetBranches: the branches the caller may
// read. The answer depends on the caller's grants, so they are part of the
// cache key (and so of the ETag).
func (s *service) GetBranches(ctx context.Context, in *deliveryv1.GetBranchesRequest) (*deliveryv1.BranchList, error) {
	p, _ := auth.FromContext(ctx)
	op := "GetBranches"
	if !p.Admin {
		op = fmt.Sprintf("GetBranches:r%v:w%v", p.Read, p.Write)
	}
	return serve(ctx, s, op, in, func(ctx context.Context) (*deliveryv1.BranchList, []string, error) {
		objs, err := s.dom.Branches(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		out, err := toObjects(objs)
		return &deliveryv1.BranchList{Branches: out}, []string{delivery.ModelTag(content.BranchDefault), delivery.BranchesTag}, err
	})
}

// GetLanguages implements Delivery_GetLanguages.
func (s *service) GetLanguages(ctx context.Context, in *deliveryv1.GetLanguagesRequest) (*deliveryv1.LanguageList, error) {
	return serve(ctx, s, "GetLanguages", in, func(ctx context.Context) (*deliveryv1.LanguageList, []string, error) {
		out, tags, err := s.configObjects(ctx, in.Branch, s.dom.Languages)
		return &deliveryv1.LanguageList{Languages: out}, tags, err
	})
}

// GetTypes implements Delivery_GetTypes.
func (s *service) GetTypes(ctx context.Context, in *deliveryv1.GetTypesRequest) (*deliveryv1.TypeList, error) {
	return serve(ctx, s, "GetTypes", in, func(ctx context.Context) (*deliveryv1.TypeList, []string, error) {
		out, tags, err := s.configObjects(ctx, in.Branch, s.dom.Types)
		return &deliveryv1.TypeList{Types: out}, tags, err
	})
}

// configObjects loads a branch's configuration objects (languages, types)
// with load and returns them with their cache tags.
func (s *service) configObjects(ctx context.Context, branch string, load func(context.Context, string) ([]delivery.Object, error)) ([]*deliveryv1.Object, []string, error) {
	objs, err := load(ctx, branch)
	if err != nil {
		return nil, nil, err
	}
	out, err := toObjects(objs)
	if err != nil {
		return nil, nil, err
	}
	tags, err := s.dom.ConfigTags(ctx, branch)
	return out, tags, err
}

// GetUpdateInfo implements Delivery_GetUpdateInfo.
func (s *service) GetUpdateInfo(ctx context.Context, in *deliveryv1.GetUpdateInfoRequest) (*deliveryv1.UpdateInfo, error) {
	return serve(ctx, s, "GetUpdateInfo", in, func(ctx context.Context) (*deliveryv1.UpdateInfo, []string, error) {
		ui, err := s.dom.UpdateInfo(ctx, in.Branch)
		if err != nil {
			return nil, nil, err
		}
		tags, err := s.dom.QueryTags(ctx, delivery.Request{Branch: in.Branch})
		if err != nil {
			return nil, nil, err
		}
		out := &deliveryv1.UpdateInfo{LastTransaction: ui.LastTransaction}
		if !ui.LastModified.IsZero() {
			out.LastModified = timestamppb.New(ui.LastModified)
		}
		return out, tags, nil
	})
}
