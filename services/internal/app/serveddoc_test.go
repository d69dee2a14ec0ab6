package app

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
	"github.com/cmsplatform/cms/proto/gen/openapi"
)

// servedDoc validates exchanges against a document the server serves at
// <base>/openapi.json: the Rendering one (NovaDB has none, so ours is the
// contract) and the operations of this platform that NovaDB's Management
// and Delivery documents lack. The served documents are Swagger 2.0, which
// openapitest converts to OpenAPI 3. A request is checked for its path,
// query and JSON body, an answer for its status, media type and JSON body.
type servedDoc struct {
	name string
	doc  *openapitest.Document
}

// servedDocs are loaded once per test binary: converting the Management
// document takes a moment.
var servedDocs = sync.OnceValues(func() (map[string]*openapitest.Document, error) {
	out := map[string]*openapitest.Document{}
	for name, spec := range map[string][]byte{"Rendering": openapi.Rendering, "Management": openapi.Management, "Delivery": openapi.Delivery} {
		d, err := openapitest.LoadSwagger2(spec)
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
})

func loadServedDoc(t *testing.T, name string) servedDoc {
	t.Helper()
	docs, err := servedDocs()
	if err != nil {
		t.Fatal(err)
	}
	return servedDoc{name, docs[name]}
}

func loadRenderingDoc(t *testing.T) servedDoc { return loadServedDoc(t, "Rendering") }

// check validates the request method target (path and query) with body
// ("" for none, sent as application/json like httpClient.do) and its
// answer r. Every error answer must be ProblemDetails.
func (d servedDoc) check(t *testing.T, method, target, body string, r httpResult) {
	t.Helper()
	req, reqBody := d.request(t, method, target, body)
	d.validate(t, req, reqBody, &http.Response{StatusCode: r.code, Header: r.header}, r.body)
}

// checkAnswer validates only the answer r, for requests the document
// rejects on purpose (a bad parameter answered 400).
func (d servedDoc) checkAnswer(t *testing.T, method, target, body string, r httpResult) {
	t.Helper()
	req, reqBody := d.request(t, method, target, body)
	d.validateAnswer(t, req, reqBody, &http.Response{StatusCode: r.code, Header: r.header}, r.body)
}

func (d servedDoc) request(t *testing.T, method, target, body string) (*http.Request, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://cms.test"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		return req, nil
	}
	req.Header.Set("Content-Type", "application/json")
	return req, []byte(body)
}

// validate checks one exchange whose bodies are given apart.
func (d servedDoc) validate(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if err := d.doc.ValidateRequest(req, reqBody); err != nil {
		t.Errorf("%s %s: the test sends a request the %s document rejects: %v", req.Method, req.URL.RequestURI(), d.name, err)
	}
	d.validateAnswer(t, req, reqBody, resp, respBody)
}

func (d servedDoc) validateAnswer(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s %s: error %d is not ProblemDetails: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := d.doc.ValidateResponse(req, reqBody, resp, respBody); err != nil {
		t.Errorf("%s %s: the answer breaks the %s document: %v", req.Method, req.URL.RequestURI(), d.name, err)
	}
}
