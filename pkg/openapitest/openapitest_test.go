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
