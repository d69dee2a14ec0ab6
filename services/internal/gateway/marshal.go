package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/httpbody"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Content types written by the gateway.
const (
	ContentTypeJSON    = "application/json; charset=utf-8"
	ContentTypeProblem = "application/problem+json; charset=utf-8"
)

// WireJSON is the gateway's JSON marshaler. Output follows NovaDB's wire
// format (see proto/README.md); input is read with protojson, which accepts
// numbers and strings for int64 and ignores unknown fields so that newer
// clients keep working.
type WireJSON struct{}

var _ runtime.Marshaler = WireJSON{}

// ContentType implements runtime.Marshaler.
func (WireJSON) ContentType(v any) string {
	if _, ok := asStreamError(v); ok {
		return ContentTypeProblem
	}
	return ContentTypeJSON
}

// Marshal implements runtime.Marshaler. It accepts proto messages (and
// writes the wire JSON one carries as it is, prejson.go), the
// values grpc-gateway passes for response_body fields (slices of messages,
// strings, numbers) and the error chunk of a failed server stream, which is
// written as ProblemDetails.
func (WireJSON) Marshal(v any) ([]byte, error) {
	if st, ok := asStreamError(v); ok {
		p := problemFromStatus(status.FromProto(st), "", nil)
		p.Detail = clipProblemText(p.Detail) // as WriteProblem does
		return json.Marshal(p)
	}
	if m, ok := v.(proto.Message); ok {
		if b, ok := wireJSONOf(m); ok {
			return b, nil
		}
	}
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	if err := marshalValue(buf, v); err != nil {
		return nil, err
	}
	if buf.Len() == 0 {
		return nil, nil
	}
	// One exact allocation instead of the doublings of a fresh buffer.
	return bytes.Clone(buf.Bytes()), nil
}

// encodeBuffers keeps the buffers responses are written into: large
// responses (a Delivery page of objects and refs is ~0.5 MB) would
// otherwise grow a new buffer through a dozen doublings each time.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds the buffers kept, so one huge response does not
// pin its memory.
const maxPooledBuffer = 4 << 20

func marshalValue(buf *bytes.Buffer, v any) error {
	switch m := v.(type) {
	case nil:
		buf.WriteString("null")
		return nil
	case *emptypb.Empty:
		return nil // an empty 200 body has no bytes at all
	case proto.Message:
		return encodeMessage(buf, m.ProtoReflect())
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Implements(reflect.TypeFor[proto.Message]()) {
		buf.WriteByte('[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeMessage(buf, rv.Index(i).Interface().(proto.Message).ProtoReflect()); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
	return nil
}

// asStreamError recognises grpc-gateway's error chunk for server streams.
func asStreamError(v any) (*spb.Status, bool) {
	m, ok := v.(map[string]proto.Message)
	if !ok || len(m) != 1 {
		return nil, false
	}
	st, ok := m["error"].(*spb.Status)
	return st, ok
}

// Unmarshal implements runtime.Marshaler.
func (WireJSON) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		m, ok = bodyField(v)
	}
	if !ok {
		return json.Unmarshal(data, v)
	}
	return unmarshalOptions.Unmarshal(data, m)
}

// bodyField returns the message a route's body field decodes into (body:
// "field" hands the decoder a pointer to the field's message pointer),
// allocating it; ok is false for anything else.
func bodyField(v any) (proto.Message, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Pointer {
		return nil, false
	}
	if _, ok := rv.Elem().Interface().(proto.Message); !ok {
		return nil, false
	}
	if rv.Elem().IsNil() {
		rv.Elem().Set(reflect.New(rv.Elem().Type().Elem()))
	}
	return rv.Elem().Interface().(proto.Message), true
}

var unmarshalOptions = protojson.UnmarshalOptions{DiscardUnknown: true}

// NewDecoder implements runtime.Marshaler.
func (w WireJSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return io.EOF // an empty body decodes to the zero request
		}
		if err := w.Unmarshal(data, v); err != nil {
			return fmt.Errorf("invalid JSON body: %w", err)
		}
		return nil
	})
}

// NewEncoder implements runtime.Marshaler.
func (w WireJSON) NewEncoder(out io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := w.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	})
}

// Binary writes google.api.HttpBody responses as raw bytes with their own
// content type and no delimiter between stream chunks, so a streamed file
// arrives byte for byte. Everything else is written as WireJSON.
type Binary struct {
	runtime.HTTPBodyMarshaler
}

// NewBinary returns the binary marshaler over WireJSON.
func NewBinary() *Binary {
	return &Binary{runtime.HTTPBodyMarshaler{Marshaler: WireJSON{}}}
}

// Delimiter implements runtime.Delimited: nothing between chunks.
func (*Binary) Delimiter() []byte { return nil }

// ContentType returns the HttpBody's content type, else WireJSON's.
func (b *Binary) ContentType(v any) string {
	if hb, ok := v.(*httpbody.HttpBody); ok && hb.GetContentType() != "" {
		return hb.GetContentType()
	}
	return b.Marshaler.ContentType(v)
}
