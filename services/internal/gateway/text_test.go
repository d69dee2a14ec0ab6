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
	for accept, want := range map[string]bool{"text/plain": true, "application/json": false, "text/plain; q=1": false, "": false} {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("accept", accept))
		if got := WantsText(ctx); got != want {
			t.Errorf("WantsText(Accept %q) = %v", accept, got)
		}
	}
}
