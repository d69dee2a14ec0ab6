// Package openapitest checks HTTP exchanges against an OpenAPI 3 document in
// tests: a request (path, query, headers, body) and its response (status,
// content type, body schema) are validated with libopenapi-validator.
// Swagger 2.0 documents (those protoc-gen-openapiv2 generates) are
// converted to OpenAPI 3 first (LoadSwagger2).
//
// The document's servers are matched by path only, so a document whose
// server is https://host/apis/cms/v1 validates requests sent to
// http://127.0.0.1:port/apis/cms/v1/... as well as to bare /branches paths.
package openapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// ErrInvalid wraps every validation failure, so callers can tell a contract
// violation from a broken document.
var ErrInvalid = errors.New("openapitest: exchange violates the document")

// Document is a loaded OpenAPI 3 document. It is safe for concurrent use.
type Document struct {
	model    *v3.Document
	v        validator.Validator
	aliases  map[string]string
	declared map[int]bool // WithDeclaredStatuses
}

// Option configures Load.
type Option func(*Document)

// WithContentTypeAlias validates a response whose media type is from as if
// it were to, e.g. application/problem+json as application/json when the
// document declares error bodies as plain JSON.
func WithContentTypeAlias(from, to string) Option {
	return func(d *Document) { d.aliases[strings.ToLower(from)] = to }
}

// WithDeclaredStatuses makes ValidateResponse require that an answer with
// one of these status codes (e.g. 429) is declared by its operation itself,
// not only covered by its "default" answer, and that it carries every
// header that declaration names (e.g. Retry-After).
func WithDeclaredStatuses(codes ...int) Option {
	return func(d *Document) {
		for _, c := range codes {
			d.declared[c] = true
		}
	}
}

// Load parses an OpenAPI 3 document (JSON or YAML). Format assertions
// (date-time, int32 ranges …) are on.
func Load(spec []byte, opts ...Option) (*Document, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("openapitest: parse document: %w", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapitest: build model: %w", err)
	}
	d := &Document{model: &m.Model, aliases: map[string]string{}, declared: map[int]bool{}}
	for _, o := range opts {
		o(d)
	}
	d.v = validator.NewValidatorFromV3Model(&m.Model, config.WithFormatAssertions())
	return d, nil
}

// LoadSwagger2 converts a Swagger 2.0 document (JSON) to OpenAPI 3 with
// kin-openapi's openapi2conv and loads the result like Load. Swagger 2.0
// gives an operation one produces list for all its answers, so after the
// conversion every answer with a schema offers it under each of those media
// types; an operation without its own list has the document's (Swagger
// 2.0's rule, which openapi2conv applies to consumes but not to produces).
// Answers that HTTP sends without content (204, 304) get none, even where
// the generator wrote an empty schema for them.
func LoadSwagger2(spec []byte, opts ...Option) (*Document, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(spec, &doc2); err != nil {
		return nil, fmt.Errorf("openapitest: parse Swagger 2.0 document: %w", err)
	}
	if !strings.HasPrefix(doc2.Swagger, "2.") {
		return nil, fmt.Errorf("openapitest: not a Swagger 2.0 document (swagger %q)", doc2.Swagger)
	}
	for _, item := range doc2.Paths {
		for _, op := range item.Operations() {
			if len(op.Produces) == 0 {
				op.Produces = doc2.Produces
			}
		}
	}
	doc3, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("openapitest: convert to OpenAPI 3: %w", err)
	}
	if doc3.Paths != nil {
		for _, item := range doc3.Paths.Map() {
			for _, op := range item.Operations() {
				if op.Responses == nil {
					continue
				}
				for code, r := range op.Responses.Map() {
					if (code == strconv.Itoa(http.StatusNoContent) || code == strconv.Itoa(http.StatusNotModified)) && r.Value != nil {
						r.Value.Content = nil
					}
				}
			}
		}
	}
	b, err := json.Marshal(doc3)
	if err != nil {
		return nil, fmt.Errorf("openapitest: encode the converted document: %w", err)
	}
	return Load(b, opts...)
}

// Operation returns the method and path template of the operation with
// operationId id, or ok == false.
func (d *Document) Operation(id string) (method, path string, ok bool) {
	for p := d.model.Paths.PathItems.First(); p != nil; p = p.Next() {
		for o := p.Value().GetOperations().First(); o != nil; o = o.Next() {
			if o.Value().OperationId == id {
				return strings.ToUpper(o.Key()), p.Key(), true
			}
		}
	}
	return "", "", false
}

// RequestExamples returns the JSON request-body examples the document gives
// for operation id: media type example(s) and the example of the body schema.
func (d *Document) RequestExamples(id string) []any {
	var out []any
	for p := d.model.Paths.PathItems.First(); p != nil; p = p.Next() {
		for o := p.Value().GetOperations().First(); o != nil; o = o.Next() {
			op := o.Value()
			if op.OperationId != id || op.RequestBody == nil {
				continue
			}
			for mt := op.RequestBody.Content.First(); mt != nil; mt = mt.Next() {
				media := mt.Value()
				if media.Example != nil {
					var v any
					if err := media.Example.Decode(&v); err == nil {
						out = append(out, v)
					}
				}
				for ex := media.Examples.First(); ex != nil; ex = ex.Next() {
					if ex.Value().Value != nil {
						var v any
						if err := ex.Value().Value.Decode(&v); err == nil {
							out = append(out, v)
						}
					}
				}
				if media.Schema != nil {
					if s := media.Schema.Schema(); s != nil && s.Example != nil {
						var v any
						if err := s.Example.Decode(&v); err == nil {
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	return out
}

// ValidateRequest validates req, whose body (nil for none) is passed
// separately so that it can be read again. It returns nil or an error
// wrapping ErrInvalid that lists every violation.
func (d *Document) ValidateRequest(req *http.Request, body []byte) error {
	r := clone(req, body)
	_, errs := d.v.ValidateHttpRequestSync(r)
	return joined("request "+req.Method+" "+req.URL.RequestURI(), errs)
}

// ValidateResponse validates resp (status, content type, body schema and
// declared headers) as the answer to req. Bodies are passed separately.
func (d *Document) ValidateResponse(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) error {
	r := clone(req, reqBody)
	w := *resp
	w.Header = resp.Header.Clone()
	ct := strings.ToLower(strings.TrimSpace(strings.Split(w.Header.Get("Content-Type"), ";")[0]))
	if to, ok := d.aliases[ct]; ok {
		w.Header.Set("Content-Type", to)
	}
	w.Body = io.NopCloser(bytes.NewReader(respBody))
	_, errs := d.v.ValidateHttpResponse(r, &w)
	if d.declared[resp.StatusCode] {
		errs = append(errs, d.checkDeclared(r, &w)...)
	}
	return joined(fmt.Sprintf("response %d to %s %s", resp.StatusCode, req.Method, req.URL.RequestURI()), errs)
}

// checkDeclared reports an answer whose status the operation does not
// declare itself, or that lacks a header the declaration names.
func (d *Document) checkDeclared(req *http.Request, resp *http.Response) []*verrors.ValidationError {
	item, _, _ := paths.FindPath(req, d.model, nil)
	if item == nil {
		return nil // the validator reported the unknown path
	}
	op := item.GetOperations().GetOrZero(strings.ToLower(req.Method))
	if op == nil {
		return nil // so it did the unknown method
	}
	code := strconv.Itoa(resp.StatusCode)
	var r *v3.Response
	if op.Responses != nil {
		r = op.Responses.Codes.GetOrZero(code)
	}
	if r == nil {
		return []*verrors.ValidationError{{Message: "status " + code + " is not declared by the operation",
			Reason: "it is only covered by the default answer; the document must declare it"}}
	}
	var errs []*verrors.ValidationError
	for h := r.Headers.First(); h != nil; h = h.Next() {
		if resp.Header.Get(h.Key()) == "" {
			errs = append(errs, &verrors.ValidationError{Message: "header " + h.Key() + " is missing",
				Reason: "the document declares it for status " + code})
		}
	}
	return errs
}

func clone(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	} else {
		r.Body = http.NoBody
	}
	return r
}

func joined(what string, errs []*verrors.ValidationError) error {
	if len(errs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s: %s", s.FieldPath, s.Reason)
		}
	}
	return fmt.Errorf("%w: %s:%s", ErrInvalid, what, b.String())
}
