package gateway

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// bodyWrapper is what grpc-gateway passes for an RPC with a string
// response_body.
type bodyWrapper struct{ *wrapperspb.StringValue }

func (b bodyWrapper) XXX_ResponseBody() any { return b.GetValue() }

// TestTextPlain: strings are written raw as text/plain, messages stay
// JSON; WantsText follows the Accept value the mux selects by.
func TestTextPlain(t *testing.T) {
	m := TextPlain{NewBinary()}
	if ct := m.ContentType(bodyWrapper{wrapperspb.String("x")}); ct != ContentTypeText {
		t.Errorf("string response_body: %q", ct)
	}
	if b, err := m.Marshal("class A {}\n\"q\""); err != nil || string(b) != "class A {}\n\"q\"" {
		t.Errorf("Marshal(string) = %q, %v", b, err)
	}
	if ct := m.ContentType(wrapperspb.Int32(1)); ct != ContentTypeJSON {
		t.Errorf("message: %q", ct)
	}
	if b, err := m.Marshal(wrapperspb.String("x")); err != nil || b[0] == 'x' {
		t.Errorf("Marshal(message) = %q, %v", b, err)
	}
	for accept, want := range map[string]bool{"text/plain": true, "application/json": false, "text/plain; q=1": true, "": true} {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("accept", accept))
		if got := WantsText(ctx); got != want {
			t.Errorf("WantsText(Accept %q) = %v", accept, got)
		}
	}
}

// TestPrefersText: a string answer is JSON only when application/json is
// named itself and nothing matching text/plain is preferred to it.
func TestPrefersText(t *testing.T) {
	for _, c := range []struct {
		accept []string
		text   bool
	}{
		{nil, true},
		{[]string{"*/*"}, true}, // fetch's default
		{[]string{"text/plain"}, true},
		{[]string{"text/*"}, true},
		{[]string{"application/json"}, false},
		{[]string{"Application/JSON; charset=utf-8"}, false},
		{[]string{"application/json, text/plain, */*"}, false}, // axios: JSON listed first
		{[]string{"text/plain, application/json"}, true},
		{[]string{"text/plain", "application/json"}, true}, // two header lines, in order
		{[]string{"application/json;q=0.5, text/plain"}, true},
		{[]string{"application/json, text/plain;q=0.5"}, false},
		{[]string{"application/json;q=0.5, */*"}, true}, // */* (q 1) matches text/plain
		{[]string{"application/json, */*;q=0.1"}, false},
		{[]string{"application/json;q=0"}, true},
		{[]string{"application/*"}, true}, // not explicit
		{[]string{"application/json;q=oops"}, true},
		{[]string{"image/png"}, true},
		{[]string{"application/problem+json"}, true},
	} {
		if got := PrefersText(c.accept); got != c.text {
			t.Errorf("PrefersText(%q) = %v, want %v", c.accept, got, c.text)
		}
	}
}
