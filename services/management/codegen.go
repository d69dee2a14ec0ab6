package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/codegen"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// GetCSharpClasses implements CodeGenerator_GetCSharpClasses: the models of
// the types ids names (all custom types with an ApiIdentifier by default)
// in the language of the path (pkg/codegen).
func (s *service) GetCSharpClasses(ctx context.Context, req *managementv1.GetCSharpClassesRequest) (*managementv1.GeneratedCode, error) {
	return s.generate(ctx, codegen.Request{Branch: req.GetBranch(), Language: req.GetLanguage(), IDs: req.GetIds()})
}

// GetCSharpClass implements CodeGenerator_GetCSharpClass: the model of one
// type.
func (s *service) GetCSharpClass(ctx context.Context, req *managementv1.GetCSharpClassRequest) (*managementv1.GeneratedCode, error) {
	return s.generate(ctx, codegen.Request{Branch: req.GetBranch(), Language: req.GetLanguage(), Type: req.GetType()})
}

// generate answers both operations. The body is the source as a JSON
// string; with Accept: text/plain the gateway writes it as plain text
// (gateway.TextPlain), which the ETag tells apart. The ETag is over the
// source itself: equal text, equal tag, whatever changed in the store.
func (s *service) generate(ctx context.Context, r codegen.Request) (*managementv1.GeneratedCode, error) {
	p := caller(ctx)
	r.Caller = &p
	src, err := s.codegen.Generate(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	var plain int64
	if gateway.WantsText(ctx) {
		plain = 1
	}
	out := &managementv1.GeneratedCode{Source: src}
	if err := gateway.Conditional(ctx, etagOf(out, plain), "vary", "Accept"); err != nil {
		return nil, err
	}
	return out, nil
}
