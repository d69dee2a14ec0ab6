package gateway

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// # Plain text answers
//
// An operation whose response_body is a string (the code generator's
// source) is a JSON string on the wire, as the OpenAPI documents declare.
// Clients that read such a body as raw text may ask for exactly that with
// the request header "Accept: text/plain": the string is then written as
// is, as text/plain; charset=utf-8. Every other answer (messages, errors)
// stays JSON whatever Accept says. Handlers that answer strings mix
// WantsText into their ETag and send Vary: Accept.

// MIMETextPlain is the Accept value that selects TextPlain (grpc-gateway
// compares Accept values exactly).
const MIMETextPlain = "text/plain"

// ContentTypeText is the content type of a plain text answer.
const ContentTypeText = "text/plain; charset=utf-8"

// TextPlain is the marshaler for Accept: text/plain: strings raw, anything
// else (and all decoding) as Binary.
type TextPlain struct {
	*Binary
}

// ContentType implements runtime.Marshaler. grpc-gateway passes the
// response message (wrapped with its response_body field), not the field.
func (t TextPlain) ContentType(v any) string {
	if rb, ok := v.(interface{ XXX_ResponseBody() any }); ok {
		v = rb.XXX_ResponseBody()
	}
	if _, ok := v.(string); ok {
		return ContentTypeText
	}
	return t.Binary.ContentType(v)
}

// Marshal implements runtime.Marshaler.
func (t TextPlain) Marshal(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return []byte(s), nil
	}
	return t.Binary.Marshal(v)
}

// WantsText reports whether the request asked for plain text (the
// gateway then writes a string answer with TextPlain).
func WantsText(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("accept") {
		if v == MIMETextPlain {
			return true
		}
	}
	return false
}
