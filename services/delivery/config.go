package delivery

import (
	"context"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// GetBranches implements Delivery_GetBranches.
func (s *service) GetBranches(ctx context.Context, in *deliveryv1.GetBranchesRequest) (*deliveryv1.BranchList, error) {
	return serve(ctx, s, "GetBranches", in, "", func() (*deliveryv1.BranchList, error) {
		objs, err := s.dom.Branches(ctx)
		if err != nil {
			return nil, err
		}
		out, err := toObjects(objs)
		return &deliveryv1.BranchList{Branches: out}, err
	})
}

// GetLanguages implements Delivery_GetLanguages.
func (s *service) GetLanguages(ctx context.Context, in *deliveryv1.GetLanguagesRequest) (*deliveryv1.LanguageList, error) {
	return serve(ctx, s, "GetLanguages", in, in.Branch, func() (*deliveryv1.LanguageList, error) {
		objs, err := s.dom.Languages(ctx, in.Branch)
		if err != nil {
			return nil, err
		}
		out, err := toObjects(objs)
		return &deliveryv1.LanguageList{Languages: out}, err
	})
}

// GetTypes implements Delivery_GetTypes.
func (s *service) GetTypes(ctx context.Context, in *deliveryv1.GetTypesRequest) (*deliveryv1.TypeList, error) {
	return serve(ctx, s, "GetTypes", in, in.Branch, func() (*deliveryv1.TypeList, error) {
		objs, err := s.dom.Types(ctx, in.Branch)
		if err != nil {
			return nil, err
		}
		out, err := toObjects(objs)
		return &deliveryv1.TypeList{Types: out}, err
	})
}

// GetUpdateInfo implements Delivery_GetUpdateInfo.
func (s *service) GetUpdateInfo(ctx context.Context, in *deliveryv1.GetUpdateInfoRequest) (*deliveryv1.UpdateInfo, error) {
	return serve(ctx, s, "GetUpdateInfo", in, in.Branch, func() (*deliveryv1.UpdateInfo, error) {
		ui, err := s.dom.UpdateInfo(ctx, in.Branch)
		if err != nil {
			return nil, err
		}
		out := &deliveryv1.UpdateInfo{LastTransaction: ui.LastTransaction}
		if !ui.LastModified.IsZero() {
			out.LastModified = timestamppb.New(ui.LastModified)
		}
		return out, nil
	})
}
