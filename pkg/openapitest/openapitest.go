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
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// ErrInvalid wraps every validation failure, so callers can tell a contract
// violation from a broken document.
var ErrInvalid = errors.New("openapitest: exchange violates the document")

// Document is a loaded OpenAPI 3 document. It is safe for concurrent use.
type Document struct {
	model   *v3.Document
	v       validator.Validator
	aliases map[string]string
}

// Option configures Load.
type Option func(*Document)

// WithContentTypeAlias validates a response whose media type is from as if
// it were to, e.g. application/problem+json as application/json when the
// document declares error bodies as plain JSON.
func WithContentTypeAlias(from, to string) Option {
	return func(d *Document) { d.aliases[strings.ToLower(from)] = to }
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
	d := &Document{model: &m.Model, aliases: map[string]string{}}
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
// types. Answers that HTTP sends without content (204, 304) get none, even
// where the generator wrote an empty schema for them.
func LoadSwagger2(spec []byte, opts ...Option) (*Document, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(spec, &doc2); err != nil {
		return nil, fmt.Errorf("openapitest: parse Swagger 2.0 document: %w", err)
	}
	if !strings.HasPrefix(doc2.Swagger, "2.") {
		return nil, fmt.Errorf("openapitest: not a Swagger 2.0 document (swagger %q)", doc2.Swagger)
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
	return joined(fmt.Sprintf("response %d to %s %s", resp.StatusCode, req.Method, req.URL.RequestURI()), errs)
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
