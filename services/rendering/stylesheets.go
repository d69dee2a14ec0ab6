package rendering

import (
	"context"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/stylesheets"
	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
)

// stylesheetCacheControl lets clients keep a sheet but revalidate it
// (ETag → 304) on every use: sheets follow the Management view, so a
// write shows in the next preview.
const stylesheetCacheControl = "no-cache"

// WithStylesheets serves the stylesheet operations from svc (built over
// the Management view); without it they answer 501.
func (g *Group) WithStylesheets(svc *stylesheets.Service) *Group {
	g.api.sheets = svc
	return g
}

// GetAppStylesCss implements GetAppStylesCssAsync
// (GET /branches/{branchId}/css/app-styles.css).
func (s *service) GetAppStylesCss(req *renderingv1.GetAppStylesCssRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.sheets == nil {
		return s.UnimplementedRenderingServiceServer.GetAppStylesCss(req, stream)
	}
	ctx := stream.Context()
	sh, err := s.sheets.AppStyles(ctx, req.GetBranchId())
	return s.sendSheet(ctx, sh, err, stream)
}

// GetAppFontsCss implements GetAppFontsCssAsync
// (GET /branches/{branchId}/css/app-fonts.css).
func (s *service) GetAppFontsCss(req *renderingv1.GetAppFontsCssRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.sheets == nil {
		return s.UnimplementedRenderingServiceServer.GetAppFontsCss(req, stream)
	}
	ctx := stream.Context()
	sh, err := s.sheets.AppFonts(ctx, req.GetBranchId())
	return s.sendSheet(ctx, sh, err, stream)
}

// GetStylesheet implements GetStylesheetAsync
// (GET /branches/{branchId}/css/{objectId}.css). The path segment is
// parsed here: a positive int32 followed by ".css"; anything else is 404.
// The literal app-styles.css and app-fonts.css also reach this route
// when the gateway matches it first, and are served as such.
func (s *service) GetStylesheet(req *renderingv1.GetStylesheetRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.sheets == nil {
		return s.UnimplementedRenderingServiceServer.GetStylesheet(req, stream)
	}
	ctx := stream.Context()
	var sh stylesheets.Sheet
	var err error
	switch file := req.GetFile(); file {
	case "app-styles.css":
		sh, err = s.sheets.AppStyles(ctx, req.GetBranchId())
	case "app-fonts.css":
		sh, err = s.sheets.AppFonts(ctx, req.GetBranchId())
	default:
		id, perr := stylesheetID(file)
		if perr != nil {
			return s.toStatus(ctx, perr)
		}
		sh, err = s.sheets.Object(ctx, req.GetBranchId(), id)
	}
	return s.sendSheet(ctx, sh, err, stream)
}

// stylesheetID parses "{objectId}.css".
func stylesheetID(file string) (int64, error) {
	num, ok := strings.CutSuffix(file, ".css")
	id, err := strconv.ParseInt(num, 10, 32)
	if !ok || err != nil || id <= 0 || num[0] == '+' {
		return 0, errkind.New(errkind.NotFound, "stylesheet "+strconv.Quote(errkind.Clip(file, 64))+" not found: expected {objectId}.css")
	}
	return id, nil
}

// sendSheet answers with a built sheet: ETag / If-None-Match → 304, else
// the CSS as text/css.
func (s *service) sendSheet(ctx context.Context, sh stylesheets.Sheet, err error, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if err != nil {
		return s.toStatus(ctx, err)
	}
	if err := gateway.Conditional(ctx, sh.ETag, "cache-control", stylesheetCacheControl); err != nil {
		return err
	}
	return stream.Send(&httpbody.HttpBody{ContentType: stylesheets.ContentType, Data: sh.CSS})
}
