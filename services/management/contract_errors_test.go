package management_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"
)

// errorCase is one case of testdata/contract/errors.yaml.
type errorCase struct {
	Name     string            `yaml:"name"`
	Op       string            `yaml:"op"`
	Method   string            `yaml:"method"`
	Path     string            `yaml:"path"`
	Body     string            `yaml:"body"`
	Header   map[string]string `yaml:"header"`
	NoAuth   bool              `yaml:"noAuth"`
	Invalid  bool              `yaml:"invalid"`
	HTTPOnly bool              `yaml:"httpOnly"`
	// Undeclared: the document declares no such status for the operation.
	Undeclared bool `yaml:"undeclared"`
	Want       struct {
		HTTPStatus int    `yaml:"httpStatus"`
		GRPCCode   string `yaml:"grpcCode"`
		Detail     string `yaml:"detail"`
	} `yaml:"want"`
}

func loadErrorCases(t *testing.T) []errorCase {
	t.Helper()
	b, err := os.ReadFile("testdata/contract/errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []errorCase
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// contractErrors checks each error status the document (or the spec) gives
// an operation: over HTTP with a ProblemDetails body valid against the
// document, and over gRPC with the matching code.
func contractErrors(t *testing.T, cl *client) {
	const g = "a1b2c3d4-0000-4000-8000-00000000000a"
	typ := ids(t, cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		body: `{"objects":[{"meta":{"typeRef":0,"guid":"` + g + `","apiIdentifier":"errThing"}}]}`}), 1)[0]
	cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		body: fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d,"apiIdentifier":"%s"}}]}`, typ, g)})

	// The bootstrap admin is an internal principal: X-CmsApi-Username
	// commits for that user (a non-internal caller gets 403, which needs a
	// user store this system does not have yet).
	as := cl.do(t, 201, call{op: "Cms_CreateObjects", method: "POST", path: "/branches/4/objects",
		header: map[string]string{"X-CmsApi-Username": "mallory"}, body: `{"objects":[{"meta":{"typeRef":50}}]}`}).json(t)
	if tr, _ := as["transaction"].(map[string]any); tr["user"] != "mallory" {
		t.Errorf("X-CmsApi-Username: transaction %v", as["transaction"])
	}

	for _, c := range loadErrorCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			cc := call{op: c.Op, method: c.Method, path: c.Path, body: c.Body, header: c.Header, noAuth: c.NoAuth, invalid: c.Invalid, undeclared: c.Undeclared}
			r := cl.do(t, c.Want.HTTPStatus, cc)
			if c.Want.Detail != "" && !strings.Contains(string(r.body), c.Want.Detail) {
				t.Errorf("problem %s does not mention %q", r.body, c.Want.Detail)
			}
			if c.HTTPOnly {
				return
			}
			var want codes.Code
			if err := want.UnmarshalJSON([]byte(`"` + c.Want.GRPCCode + `"`)); err != nil {
				t.Fatalf("grpcCode %q: %v", c.Want.GRPCCode, err)
			}
			if got := cl.grpc.invoke(t, cc); got != want {
				t.Errorf("gRPC %s = %s, want %s", c.Op, got, want)
			}
		})
	}
}

// TestContractValidatorBites proves the document checks are live for the
// shapes used above: a response with an unknown field, a string id, or a
// wrong status must be rejected.
func TestContractValidatorBites(t *testing.T) {
	d := contractDoc(t)
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/branches/4/objects/1", 200, `{"meta":{"id":1},"extra":1}`},
		{"GET", "/branches/4/objects/1", 200, `{"meta":{"id":"1"}}`},
		{"GET", "/branches/4/objects/1", 200, `{"values":[{"attribute":1,"value":1,"sortReverse":"x"}]}`},
		{"POST", "/branches/4/objects", 200, `{"createdObjectIds":[1]}`}, // 201 is the only success
		{"GET", "/branches", 200, `{"count":1,"objects":{}}`},
		{"GET", "/users/x", 200, `{"meta":{"typeRef":"110"}}`},
		{"PATCH", "/branches/4/objects", 200, `{"transaction":{"id":1,"timestamp":"yesterday"}}`},
	} {
		req, err := http.NewRequest(c.method, "http://h/apis/cms/v1"+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {"application/json"}}}
		if err := d.ValidateResponse(req, nil, resp, []byte(c.body)); err == nil {
			t.Errorf("%s %s %d %s: accepted", c.method, c.path, c.status, c.body)
		}
	}
}
