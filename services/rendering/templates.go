package rendering

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/templates"
	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// renderCacheControl lets clients keep a render but revalidate it (ETag →
// 304) on every use: renders follow the Management view.
const renderCacheControl = "no-cache"

// WithTemplates serves the render operations from svc; without it they
// answer 501.
func (g *Group) WithTemplates(svc *templates.Service) *Group {
	g.api.templates = svc
	return g
}

// WithSeparateOrigin says that the Rendering group is served from an origin
// of its own (renderSeparateOrigin): renders then come without
// templates.SandboxPolicy, so their scripts run.
func (g *Group) WithSeparateOrigin(separate bool) *Group {
	g.api.separateOrigin = separate
	return g
}

// RenderTemplate implements RenderTemplateAsync
// (POST /branches/{branchId}/templates/{templateId}/render).
func (s *service) RenderTemplate(req *renderingv1.RenderTemplateRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.templates == nil {
		return s.UnimplementedRenderingServiceServer.RenderTemplate(req, stream)
	}
	ctx := stream.Context()
	b := req.GetBody()
	r, err := renderRequest(ctx, req.GetBranchId(), strconv.FormatInt(int64(req.GetTemplateId()), 10),
		b.GetObjects(), b.GetLanguages(), b.GetVariants())
	if err != nil {
		return s.toStatus(ctx, err)
	}
	r.Parameters, r.UICulture, r.Hyphenate = b.GetParameters(), b.GetUiCulture(), req.GetHyphenate()
	return s.sendRender(ctx, r, stream)
}

// GetRenderedTemplate implements GetRenderedTemplateAsync
// (GET /branches/{branchId}/templates/{templateId}/render).
func (s *service) GetRenderedTemplate(req *renderingv1.GetRenderedTemplateRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.templates == nil {
		return s.UnimplementedRenderingServiceServer.GetRenderedTemplate(req, stream)
	}
	ctx := stream.Context()
	params, err := parameters(req.GetParameters())
	if err != nil {
		return s.toStatus(ctx, err)
	}
	r := templates.Request{Branch: req.GetBranchId(), Template: strconv.FormatInt(int64(req.GetTemplateId()), 10),
		Objects: content.SplitIdents(req.GetObjects()), Languages: content.SplitIdents(req.GetLanguages()),
		Variants: content.SplitIdents(req.GetVariants()), Parameters: params, UICulture: req.GetUiCulture(),
		Hyphenate: req.GetHyphenate(), Caller: callerOf(ctx)}
	return s.sendRender(ctx, r, stream)
}

func (s *service) sendRender(ctx context.Context, r templates.Request, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	res, err := s.templates.Render(ctx, r)
	if err != nil {
		return s.renderStatus(ctx, err)
	}
	pairs := []string{"cache-control", renderCacheControl, "x-content-type-options", "nosniff"}
	if !s.separateOrigin {
		pairs = append(pairs, "content-security-policy", templates.SandboxPolicy)
	}
	if err := gateway.Conditional(ctx, res.ETag, pairs...); err != nil {
		return err
	}
	return stream.Send(&httpbody.HttpBody{ContentType: templates.ContentType, Data: res.HTML})
}

// renderStatus maps a render error: a template error is 422 with the
// template's line and column in the ProblemDetails.
func (s *service) renderStatus(ctx context.Context, err error) error {
	var te *templates.TemplateError
	if errors.As(err, &te) {
		md := map[string]string{"template": strconv.FormatInt(te.Template, 10)}
		if te.Line > 0 {
			md["line"], md["column"] = strconv.Itoa(te.Line), strconv.Itoa(te.Column)
		}
		return gateway.WithReason(codes.InvalidArgument, gateway.ReasonUnprocessable, gateway.ClientDetail(te), md)
	}
	return s.toStatus(ctx, err)
}

// maxParametersText bounds the parameters query value (64 parameters of
// up to 4 KiB each, encoded).
const maxParametersText = 64 << 10

// parameters parses the parameters query value: URI encoded name=value
// pairs joined by "&" (the first value of a repeated name counts).
func parameters(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxParametersText || strings.Count(s, "&") >= templates.MaxParameters {
		return nil, errkind.New(errkind.Invalid, fmt.Sprintf("parameters: at most %d pairs and %d bytes", templates.MaxParameters, maxParametersText))
	}
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, errkind.New(errkind.Invalid, "parameters: "+err.Error())
	}
	out := make(map[string]string, len(q))
	for k, v := range q {
		out[k] = v[0]
	}
	return out, nil
}

func callerOf(ctx context.Context) *auth.Principal {
	if p, ok := auth.FromContext(ctx); ok {
		return &p
	}
	return nil
}

// renderRequest builds a render of template over the identifier lists of
// a JSON body (numbers or strings).
func renderRequest(ctx context.Context, branch, template string, objects, languages, variants []*structpb.Value) (templates.Request, error) {
	r := templates.Request{Branch: branch, Template: template, Caller: callerOf(ctx)}
	var err error
	if r.Objects, err = idents("objects", objects); err != nil {
		return r, err
	}
	if r.Languages, err = idents("languages", languages); err != nil {
		return r, err
	}
	r.Variants, err = idents("variants", variants)
	return r, err
}

// idents reads identifiers given as JSON numbers (ids) or strings.
func idents(field string, vs []*structpb.Value) ([]string, error) {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		s, err := ident(field, v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func ident(field string, v *structpb.Value) (string, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue, nil
	case *structpb.Value_NumberValue:
		if n := k.NumberValue; n == float64(int64(n)) && n > 0 && n < 1<<53 {
			return strconv.FormatInt(int64(n), 10), nil
		}
	}
	return "", errkind.New(errkind.Invalid, field+": an identifier is a positive integer or a string")
}

// batchResult is one job's entry in the RenderBatch answer.
type batchResult struct {
	Status      int              `json:"status"`
	ETag        string           `json:"etag,omitempty"`
	ContentType string           `json:"contentType,omitempty"`
	Body        string           `json:"body,omitempty"`
	Problem     *gateway.Problem `json:"problem,omitempty"`
}

// RenderBatch implements RenderBatchAsync (POST
// /branches/{branchId}/renderBatch): every job renders on its own; the
// answer lists each job's output or ProblemDetails, in order.
func (s *service) RenderBatch(req *renderingv1.RenderBatchRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.templates == nil {
		return s.UnimplementedRenderingServiceServer.RenderBatch(req, stream)
	}
	ctx := stream.Context()
	jobs := req.GetBody().GetJobs()
	rs := make([]templates.Request, len(jobs))
	for i, j := range jobs {
		tpl, err := ident("template", j.GetTemplate())
		if err == nil {
			rs[i], err = renderRequest(ctx, req.GetBranchId(), tpl, j.GetObjects(), j.GetLanguages(), j.GetVariants())
		}
		if err != nil {
			return s.toStatus(ctx, fmt.Errorf("jobs[%d]: %w", i, err))
		}
		rs[i].Parameters, rs[i].UICulture, rs[i].Hyphenate = j.GetParameters(), j.GetUiCulture(), j.GetHyphenate()
	}
	out, err := s.templates.RenderBatch(ctx, rs)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	answer := struct {
		Results []batchResult `json:"results"`
	}{Results: make([]batchResult, len(out))}
	for i, o := range out {
		if o.Err != nil {
			st := status.Convert(s.renderStatus(ctx, o.Err))
			p := gateway.ProblemOf(st, fmt.Sprintf("/apis/rendering/v1/branches/%s/renderBatch#jobs/%d", url.PathEscape(req.GetBranchId()), i))
			answer.Results[i] = batchResult{Status: p.Status, Problem: &p}
			continue
		}
		answer.Results[i] = batchResult{Status: 200, ETag: o.Result.ETag, ContentType: templates.ContentType, Body: string(o.Result.HTML)}
	}
	body, err := json.Marshal(answer)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	return stream.Send(&httpbody.HttpBody{ContentType: "application/json", Data: body})
}
