package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reasons carried in errdetails.ErrorInfo that need an HTTP status the gRPC
// code alone cannot express. Services attach them with WithReason; this
// table is the only place that turns them into statuses.
const (
	ReasonNotModified           = "NOT_MODIFIED"           // 304, no body
	ReasonPayloadTooLarge       = "PAYLOAD_TOO_LARGE"      // 413
	ReasonUnprocessable         = "UNPROCESSABLE_ENTITY"   // 422
	ReasonConflict              = "CONFLICT"               // 409
	ReasonRangeNotSatisfiable   = "RANGE_NOT_SATISFIABLE"  // 416
	ReasonPreconditionFailed    = "PRECONDITION_FAILED"    // 412
	ReasonUnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE" // 415
	ReasonNotImplemented        = "NOT_IMPLEMENTED"        // 501
	ReasonTooManyRequests       = "TOO_MANY_REQUESTS"      // 429, a per-user cap (metadata "limit" names it)
	errorDomain                 = "cms.cmsplatform.dev"
	problemTypeBase             = "https://cmsplatform.dev/problems/"
	headerHTTPCode              = "x-http-code"
	metadataOperationIDKey      = "x-cms-operation"
	fallbackProblemMarshalError = `{"type":"about:blank","title":"Internal Server Error","status":500}`
)

// ProblemTypeNoRoute is the type of the 404 for a path no operation serves,
// as opposed to a 404 for a missing resource.
const ProblemTypeNoRoute = problemTypeBase + "no-route"

var reasonStatus = map[string]int{
	ReasonNotModified:          http.StatusNotModified,
	ReasonPayloadTooLarge:      http.StatusRequestEntityTooLarge,
	ReasonUnprocessable:        http.StatusUnprocessableEntity,
	ReasonConflict:             http.StatusConflict,
	ReasonRangeNotSatisfiable:  http.StatusRequestedRangeNotSatisfiable,
	ReasonPreconditionFailed:   http.StatusPreconditionFailed,
	ReasonUnsupportedMediaType: http.StatusUnsupportedMediaType,
	ReasonNotImplemented:       http.StatusNotImplemented,
	ReasonTooManyRequests:      http.StatusTooManyRequests,
	ReasonOverloaded:           http.StatusServiceUnavailable,
}

// WithReason returns a gRPC status error with code c and an ErrorInfo
// carrying reason, so the gateway answers with the status the table assigns.
func WithReason(c codes.Code, reason, msg string, metadata map[string]string) error {
	st := status.New(c, msg)
	withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain, Metadata: metadata})
	if err != nil {
		return st.Err()
	}
	return withInfo.Err()
}

// Problem is an RFC 7807 problem details document (NovaDB's ProblemDetails).
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Operation names the NovaDB operation, e.g. for 501 Not Implemented.
	Operation string `json:"operation,omitempty"`
	// Reason is the machine-readable cause from the service's ErrorInfo.
	Reason string `json:"reason,omitempty"`
	// RequestID is the request's X-Request-Id: the server log lines of the
	// request carry it (an RFC 7807 extension member).
	RequestID string `json:"requestId,omitempty"`
	// Line and Column locate an error in a text the request named, e.g. a
	// template (extension members; from ErrorInfo metadata "line" and
	// "column").
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Limit names the setting of the per-user cap a 429 met, e.g.
	// "renderSlotsPerUser" (extension member; ErrorInfo metadata "limit").
	Limit string `json:"limit,omitempty"`
	// Attribute, Language and Variant name the value a 400 is about
	// (extension members; ErrorInfo metadata of the same names), so a
	// client shows the error at its field; absent when not known.
	Attribute *int64 `json:"attribute,omitempty"`
	Language  *int64 `json:"language,omitempty"`
	Variant   *int64 `json:"variant,omitempty"`
	// SortReverse is the position of that value among its attribute's rows
	// (extension member; ErrorInfo metadata "sortReverse"), when known.
	SortReverse *int64 `json:"sortReverse,omitempty"`
}

// ProblemOf is the ProblemDetails a status is answered with (for answers
// that carry several, e.g. a batch), detail and instance cut like
// WriteProblem's.
func ProblemOf(st *status.Status, instance string) Problem {
	p := problemFromStatus(st, instance, nil)
	p.Detail, p.Instance = clipProblemText(p.Detail), clipProblemText(p.Instance)
	return p
}

// HTTPStatus returns the HTTP status for a gRPC status: the reason table
// first, then grpc-gateway's code mapping.
func HTTPStatus(st *status.Status) int {
	if info := errorInfo(st); info != nil {
		if code, ok := reasonStatus[info.GetReason()]; ok {
			return code
		}
	}
	if messageTooLarge(st) {
		return http.StatusRequestEntityTooLarge
	}
	return runtime.HTTPStatusFromCode(st.Code())
}

// messageTooLarge recognises gRPC's own ResourceExhausted for a request
// message over the server's MaxRecvMsgSize (or the client's send limit).
// The gateway's connection receives without limit, so a "received message
// larger than max" status always comes from the server and means the
// request was too large (413), not that too many requests came (429).
func messageTooLarge(st *status.Status) bool {
	if st.Code() != codes.ResourceExhausted || errorInfo(st) != nil {
		return false
	}
	m := st.Message()
	return strings.HasPrefix(m, "grpc: received message larger than max") ||
		strings.HasPrefix(m, "grpc: trying to send message larger than max")
}

// metaInt is an integer of the ErrorInfo's metadata, nil when absent.
func metaInt(info *errdetails.ErrorInfo, key string) *int64 {
	s, ok := info.GetMetadata()[key]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

func problemFromStatus(st *status.Status, instance string, override *int) Problem {
	code := HTTPStatus(st)
	if override != nil {
		code = *override
	}
	p := Problem{
		Type:     "about:blank",
		Title:    http.StatusText(code),
		Status:   code,
		Detail:   st.Message(),
		Instance: instance,
	}
	if info := errorInfo(st); info != nil {
		p.Reason = info.GetReason()
		p.Operation = info.GetMetadata()["operation"]
		p.Line, _ = strconv.Atoi(info.GetMetadata()["line"])
		p.Column, _ = strconv.Atoi(info.GetMetadata()["column"])
		p.Limit = info.GetMetadata()["limit"]
		p.Attribute, p.Language, p.Variant = metaInt(info, "attribute"), metaInt(info, "language"), metaInt(info, "variant")
		p.SortReverse = metaInt(info, "sortReverse")
		if p.Reason != "" {
			p.Type = problemTypeBase + strings.ToLower(strings.ReplaceAll(p.Reason, "_", "-"))
		}
	}
	if code >= 500 && st.Code() != codes.Unimplemented && st.Code() != codes.Unavailable {
		// Internal causes go to the log, never to the client.
		p.Detail = "internal error; the server log has the cause under the requestId"
	}
	if messageTooLarge(st) {
		p.Reason, p.Type = ReasonPayloadTooLarge, problemTypeBase+"payload-too-large"
		p.Detail = "the request message exceeds the size the server accepts"
	}
	return p
}

// ErrorHandler writes every error as application/problem+json. It honours
// *runtime.HTTPStatusError (gateway-level 413/415/422) and answers
// NOT_MODIFIED with a bare 304 that still carries ETag and Cache-Control.
func ErrorHandler(ctx context.Context, mux *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	var override *int
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		override = &hse.HTTPStatus
		err = hse.Err
	}
	if limit, over := BodyTooLarge(r); over {
		// The decoder's read failed at the body limit; the generated code
		// reports any decode error as InvalidArgument.
		override, err = nil, WithReason(codes.ResourceExhausted, ReasonPayloadTooLarge,
			fmt.Sprintf("the request body exceeds the limit of %d bytes", limit), nil)
	}
	st := status.Convert(err)
	if plain, ok := params.Plain(st.Message()); ok && st.Code() == codes.InvalidArgument && len(st.Details()) == 0 {
		// A query or path parameter the gateway could not convert.
		st = status.New(codes.InvalidArgument, plain)
	}
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		writeMetadataHeaders(w, md.HeaderMD)
	}
	p := problemFromStatus(st, r.URL.Path, override)
	if p.Status >= 500 {
		RecordFault(r.Context(), st.Code().String()+": "+st.Message())
		if IsOverloaded(st) {
			MarkExpected(r.Context()) // counted by the services' observer, summed up there
		}
	}
	if p.Status == http.StatusNotModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	WriteProblem(w, p)
}

// maxProblemText bounds a ProblemDetails' detail and instance: an error
// that quotes its input (a 10,000-character path segment, a 2 MiB field)
// does not echo it whole.
const maxProblemText = 1024

// clipProblemText cuts s to maxProblemText bytes, marking the cut.
func clipProblemText(s string) string { return errkind.Clip(s, maxProblemText) }

// WriteProblem writes p with its status; detail and instance are cut to
// maxProblemText bytes.
func WriteProblem(w http.ResponseWriter, p Problem) {
	p.Detail, p.Instance = clipProblemText(p.Detail), clipProblemText(p.Instance)
	if p.RequestID == "" {
		p.RequestID = w.Header().Get(HeaderRequestID)
	}
	body, err := json.Marshal(p)
	if err != nil {
		body, p.Status = []byte(fallbackProblemMarshalError), http.StatusInternalServerError
	}
	w.Header().Del("Content-Length")
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// RoutingErrorHandler answers unknown paths with 404 and a known path with
// the wrong method with 405 (grpc-gateway's default would say 501, which is
// reserved for operations that exist but are not implemented yet).
func RoutingErrorHandler(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	p := Problem{Type: "about:blank", Title: http.StatusText(code), Status: code, Instance: r.URL.Path}
	switch code {
	case http.StatusNotFound:
		p.Type = ProblemTypeNoRoute
		p.Detail = "no operation is served at " + r.Method + " " + r.URL.Path
	case http.StatusMethodNotAllowed:
		p.Type = problemTypeBase + "method-not-allowed"
		p.Detail = "the path exists but does not accept " + r.Method
	case http.StatusBadRequest:
		p.Detail = "the request path or query could not be parsed"
	}
	WriteProblem(w, p)
}

// HeaderRequestID names the request id header: honoured or generated at
// the edge, forwarded to the services, written on every answer and carried
// by every ProblemDetails as requestId.
const HeaderRequestID = "X-Request-Id"

// Fault is why the gateway answered a request with a 5xx; the edge logs it.
type Fault struct {
	Cause string
	// Expected marks a 5xx answered on purpose (a shed request, /readyz
	// while draining or during an outage): the edge does not log it as a
	// fault.
	Expected bool
	// Shed is the group of a request the edge itself shed (counted there);
	// empty otherwise.
	Shed string
}

type faultKey struct{}

// WithFault returns ctx carrying an empty Fault that the error handler
// fills when it answers 5xx.
func WithFault(ctx context.Context) (context.Context, *Fault) {
	f := &Fault{}
	return context.WithValue(ctx, faultKey{}, f), f
}

// FromEdge reports whether ctx is (derived from) a request the HTTP edge
// serves, which logs it; the gRPC observer does not log such calls again.
func FromEdge(ctx context.Context) bool {
	_, ok := ctx.Value(faultKey{}).(*Fault)
	return ok
}

// MarkExpected notes in ctx's Fault, if any, that its 5xx is an expected
// answer, not a fault.
func MarkExpected(ctx context.Context) {
	if f, ok := ctx.Value(faultKey{}).(*Fault); ok {
		f.Expected = true
	}
}

// MarkShed notes in ctx's Fault, if any, that the edge shed the request
// of group (an expected answer the edge counts).
func MarkShed(ctx context.Context, group string) {
	if f, ok := ctx.Value(faultKey{}).(*Fault); ok {
		f.Expected, f.Shed = true, group
	}
}

// RecordFault notes cause in ctx's Fault, if any.
func RecordFault(ctx context.Context, cause string) {
	if f, ok := ctx.Value(faultKey{}).(*Fault); ok {
		f.Cause = cause
	}
}
