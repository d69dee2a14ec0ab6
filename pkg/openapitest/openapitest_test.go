package openapitest_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
)

const spec = `{"openapi":"3.0.0","info":{"title":"t","version":"1"},
"servers":[{"url":"https://example.com/api/v1"}],
"paths":{"/things/{id}":{"patch":{"operationId":"Things_Update",
  "parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}},
                {"name":"take","in":"query","schema":{"type":"integer","format":"int32"}}],
  "requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"},
    "example":{"name":"x"}}}},
  "responses":{"200":{"description":"OK","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}},
               "400":{"description":"bad","content":{"application/json":{"schema":{"type":"object"}}}}}}}},
"components":{"schemas":{"Thing":{"type":"object","additionalProperties":false,
  "properties":{"name":{"type":"string"},"at":{"type":"string","format":"date-time"}}}}}}`

func load(t *testing.T, opts ...openapitest.Option) *openapitest.Document {
	t.Helper()
	d, err := openapitest.Load([]byte(spec), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func exchange(t *testing.T, target, reqBody string, status int, ct, respBody string) (*http.Request, []byte, *http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, target, strings.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}}}
	return req, []byte(reqBody), resp, []byte(respBody)
}

func TestRequests(t *testing.T) {
	d := load(t)
	for _, c := range []struct {
		target, body string
		ok           bool
	}{
		{"http://127.0.0.1:1/api/v1/things/a?take=5", `{"name":"x"}`, true},
		{"http://127.0.0.1:1/things/a", `{"name":"x"}`, true},
		{"http://127.0.0.1:1/api/v1/things/a", `{"nope":1}`, false},
		{"http://127.0.0.1:1/api/v1/things/a?take=abc", `{}`, false},
		{"http://127.0.0.1:1/api/v1/others", `{}`, false},
	} {
		req, body, _, _ := exchange(t, c.target, c.body, 200, "", "")
		err := d.ValidateRequest(req, body)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, openapitest.ErrInvalid) {
			t.Errorf("%s %s: %v, want ok=%v", c.target, c.body, err, c.ok)
		}
	}
}

func TestResponses(t *testing.T) {
	for _, c := range []struct {
		status    int
		ct, body  string
		alias, ok bool
	}{
		{200, "application/json", `{"name":"x","at":"2024-05-01T10:00:00.1234567Z"}`, false, true},
		{200, "application/json", `{"name":5}`, false, false},
		{200, "application/json", `{"at":"yesterday"}`, false, false},
		{200, "application/json", `{"extra":true}`, false, false},
		{200, "text/plain", `hi`, false, false},
		{418, "application/json", `{}`, false, false},
		{400, "application/problem+json", `{"title":"bad"}`, false, false},
		{400, "application/problem+json", `{"title":"bad"}`, true, true},
	} {
		var opts []openapitest.Option
		if c.alias {
			opts = append(opts, openapitest.WithContentTypeAlias("application/problem+json", "application/json"))
		}
		d := load(t, opts...)
		req, rb, resp, body := exchange(t, "http://h/api/v1/things/a", `{}`, c.status, c.ct, c.body)
		if err := d.ValidateResponse(req, rb, resp, body); (err == nil) != c.ok {
			t.Errorf("%d %s %s: %v, want ok=%v", c.status, c.ct, c.body, err, c.ok)
		}
	}
}

func TestOperationAndExamples(t *testing.T) {
	d := load(t)
	m, p, ok := d.Operation("Things_Update")
	if !ok || m != http.MethodPatch || p != "/things/{id}" {
		t.Fatalf("Operation = %s %s %v", m, p, ok)
	}
	if _, _, ok := d.Operation("nope"); ok {
		t.Fatal("unknown operation found")
	}
	ex := d.RequestExamples("Things_Update")
	if len(ex) != 1 || ex[0].(map[string]any)["name"] != "x" {
		t.Fatalf("examples = %v", ex)
	}
}

// swagger2 is shaped like a protoc-gen-openapiv2 document: a produces
// list for the document and one per operation that differs, an empty
// schema on a 304, errors under default.
const swagger2 = `{"swagger":"2.0","info":{"title":"t","version":"1"},
"consumes":["application/json"],"produces":["application/json","application/problem+json"],
"paths":{
 "/v1/counts/{id}":{"get":{"operationId":"Counts_Get",
  "parameters":[{"name":"id","in":"path","required":true,"type":"integer","format":"int32"}],
  "responses":{"200":{"description":"count","schema":{"$ref":"#/definitions/Count"}},
   "default":{"description":"error","schema":{"$ref":"#/definitions/Problem"}}}}},
 "/v1/sheets/{id}":{"get":{"operationId":"Sheets_Get","produces":["text/css","application/problem+json"],
  "parameters":[{"name":"id","in":"path","required":true,"type":"integer","format":"int32"}],
  "responses":{"200":{"description":"sheet","schema":{"type":"string","format":"binary"}},
   "304":{"description":"not modified","schema":{}},
   "default":{"description":"error","schema":{"$ref":"#/definitions/Problem"}}}}},
 "/v1/batch":{"post":{"operationId":"Batch","produces":["application/json","application/problem+json"],
  "parameters":[{"name":"body","in":"body","required":true,"schema":{"$ref":"#/definitions/Jobs"}}],
  "responses":{"200":{"description":"results","schema":{"$ref":"#/definitions/Results"}},
   "default":{"description":"error","schema":{"$ref":"#/definitions/Problem"}}}}}},
"definitions":{
 "Count":{"type":"object","properties":{"n":{"type":"integer","format":"int64"}}},
 "Problem":{"type":"object","required":["title","status"],"properties":{"title":{"type":"string"},"status":{"type":"integer","format":"int32"}}},
 "Jobs":{"type":"object","properties":{"jobs":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","format":"int32"}}}}}},
 "Results":{"type":"object","required":["results"],"properties":{"results":{"type":"array","items":{"type":"object","required":["status"],
   "properties":{"status":{"type":"integer","format":"int32"},"problem":{"$ref":"#/definitions/Problem"}}}}}}}}`

func TestSwagger2(t *testing.T) {
	d, err := openapitest.LoadSwagger2([]byte(swagger2))
	if err != nil {
		t.Fatal(err)
	}
	if m, p, ok := d.Operation("Batch"); !ok || m != http.MethodPost || p != "/v1/batch" {
		t.Fatalf("Operation(Batch) = %s %s %v", m, p, ok)
	}
	for _, c := range []struct {
		method, target, reqBody string
		status                  int
		ct, body                string
		reqOK, respOK           bool
	}{
		{http.MethodGet, "/v1/counts/7", "", 200, "application/json", `{"n":12345678901}`, true, true},
		{http.MethodGet, "/v1/counts/7", "", 200, "application/json", `{"n":"12345678901"}`, true, false},
		{http.MethodGet, "/v1/counts/7", "", 404, "application/problem+json", `{"title":"Not Found","status":404}`, true, true},
		{http.MethodGet, "/v1/counts/7", "", 404, "text/plain", `Not Found`, true, false},
		{http.MethodGet, "/v1/sheets/7", "", 200, "text/css; charset=utf-8", "a{}", true, true},
		{http.MethodGet, "/v1/sheets/7", "", 200, "text/html", "<p>", true, false},
		{http.MethodGet, "/v1/sheets/7", "", 304, "", "", true, true},
		{http.MethodGet, "/v1/sheets/7", "", 404, "application/problem+json", `{"title":"Not Found","status":404}`, true, true},
		{http.MethodGet, "/v1/sheets/7", "", 404, "application/problem+json", `{"title":"Not Found"}`, true, false},
		{http.MethodGet, "/v1/sheets/x", "", 400, "application/problem+json", `{"title":"Bad Request","status":400}`, false, true},
		{http.MethodPost, "/v1/batch", `{"jobs":[{"n":1}]}`, 200, "application/json", `{"results":[{"status":200},{"status":404,"problem":{"title":"Not Found","status":404}}]}`, true, true},
		{http.MethodPost, "/v1/batch", `{"jobs":[{"n":"one"}]}`, 200, "application/json", `{"results":[{"status":"200"}]}`, false, false},
		{http.MethodPost, "/v1/batch", `{"jobs":[]}`, 200, "application/json", `{"results":[{"problem":{"title":"x","status":1}}]}`, true, false},
		{http.MethodPost, "/v1/batch", `{"jobs":[]}`, 200, "application/json", `{"items":[]}`, true, false},
	} {
		req, err := http.NewRequest(c.method, "http://127.0.0.1:1"+c.target, strings.NewReader(c.reqBody))
		if err != nil {
			t.Fatal(err)
		}
		var reqBody []byte
		if c.reqBody != "" {
			req.Header.Set("Content-Type", "application/json")
			reqBody = []byte(c.reqBody)
		}
		if err := d.ValidateRequest(req, reqBody); (err == nil) != c.reqOK {
			t.Errorf("request %s %s %s: %v, want ok=%v", c.method, c.target, c.reqBody, err, c.reqOK)
		}
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
		if c.ct != "" {
			resp.Header.Set("Content-Type", c.ct)
		}
		if err := d.ValidateResponse(req, reqBody, resp, []byte(c.body)); (err == nil) != c.respOK {
			t.Errorf("response %d %s %s to %s %s: %v, want ok=%v", c.status, c.ct, c.body, c.method, c.target, err, c.respOK)
		}
	}
	if _, err := openapitest.LoadSwagger2([]byte(spec)); err == nil {
		t.Error("LoadSwagger2 accepted an OpenAPI 3 document")
	}
}

// TestDeclaredStatuses: with WithDeclaredStatuses(429), a 429 answer is
// valid only where the operation declares 429 itself (the default answer
// does not do) and only with the headers the declaration names; without
// the option the default answer covers it.
func TestDeclaredStatuses(t *testing.T) {
	const doc = `{"swagger":"2.0","info":{"title":"t","version":"1"},"produces":["application/json","application/problem+json"],
"paths":{
 "/v1/renders/{id}":{"get":{"operationId":"Render",
  "parameters":[{"name":"id","in":"path","required":true,"type":"integer","format":"int32"}],
  "responses":{"200":{"description":"ok","schema":{"type":"object"}},
   "429":{"description":"busy","headers":{"Retry-After":{"type":"integer"}},"schema":{"$ref":"#/definitions/Problem"}},
   "default":{"description":"error","schema":{"$ref":"#/definitions/Problem"}}}}},
 "/v1/counts/{id}":{"get":{"operationId":"Count",
  "parameters":[{"name":"id","in":"path","required":true,"type":"integer","format":"int32"}],
  "responses":{"200":{"description":"ok","schema":{"type":"object"}},
   "default":{"description":"error","schema":{"$ref":"#/definitions/Problem"}}}}}},
"definitions":{"Problem":{"type":"object","required":["title","status"],
  "properties":{"title":{"type":"string"},"status":{"type":"integer","format":"int32"},"limit":{"type":"string"}}}}}`
	strict, err := openapitest.LoadSwagger2([]byte(doc), openapitest.WithDeclaredStatuses(http.StatusTooManyRequests))
	if err != nil {
		t.Fatal(err)
	}
	lax, err := openapitest.LoadSwagger2([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	problem := `{"title":"Too Many Requests","status":429,"limit":"renderSlotsPerUser"}`
	for _, c := range []struct {
		target     string
		retryAfter string
		strictOK   bool
		laxOK      bool
	}{
		{"/v1/renders/1", "2", true, true},
		{"/v1/renders/1", "", false, true}, // the declared header is missing
		{"/v1/counts/1", "2", false, true}, // only the default answer covers 429
	} {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:1"+c.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Content-Type": {"application/problem+json"}}}
		if c.retryAfter != "" {
			resp.Header.Set("Retry-After", c.retryAfter)
		}
		if err := strict.ValidateResponse(req, nil, resp, []byte(problem)); (err == nil) != c.strictOK ||
			err != nil && !errors.Is(err, openapitest.ErrInvalid) {
			t.Errorf("strict: 429 (Retry-After %q) to %s: %v, want ok=%v", c.retryAfter, c.target, err, c.strictOK)
		}
		if err := lax.ValidateResponse(req, nil, resp, []byte(problem)); (err == nil) != c.laxOK {
			t.Errorf("lax: 429 (Retry-After %q) to %s: %v, want ok=%v", c.retryAfter, c.target, err, c.laxOK)
		}
	}
}
