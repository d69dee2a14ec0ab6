package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
	"github.com/cmsplatform/cms/proto/gen/openapi"
)

// renderingDoc validates exchanges against the served Rendering document.
// NovaDB has none, so ours is the contract; it is Swagger 2.0, which
// openapitest converts to OpenAPI 3. A request is checked for its path,
// query and JSON body, an answer for its status, media type and JSON body
// (the batch answer, ProblemDetails).
type renderingDoc struct {
	doc *openapitest.Document
}

func loadRenderingDoc(t *testing.T) renderingDoc {
	t.Helper()
	doc, err := openapitest.LoadSwagger2(openapi.Rendering)
	if err != nil {
		t.Fatal(err)
	}
	return renderingDoc{doc}
}

// check validates the request method target (path and query) with body
// ("" for none, sent as application/json like httpClient.do) and its
// answer r. Every error answer must be ProblemDetails.
func (d renderingDoc) check(t *testing.T, method, target, body string, r httpResult) {
	t.Helper()
	var reqBody []byte
	if body != "" {
		reqBody = []byte(body)
	}
	req, err := http.NewRequest(method, "http://cms.test"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	d.validate(t, req, reqBody, &http.Response{StatusCode: r.code, Header: r.header}, r.body)
}

// validate checks one exchange whose bodies are given apart.
func (d renderingDoc) validate(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if err := d.doc.ValidateRequest(req, reqBody); err != nil {
		t.Errorf("%s %s: the test sends a request the Rendering document rejects: %v", req.Method, req.URL.RequestURI(), err)
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s %s: error %d is not ProblemDetails: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := d.doc.ValidateResponse(req, reqBody, resp, respBody); err != nil {
		t.Errorf("%s %s: the answer breaks the Rendering document: %v", req.Method, req.URL.RequestURI(), err)
	}
}
