package gateway

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Answers with their own wire JSON. A service called by the gateway in
// process (InProcess.Invoke) may answer with the JSON a domain encoder
// wrote straight from its view instead of a filled message: the gateway
// writes those bytes as they are (WireJSON.Marshal), which saves building
// the message and encoding it again by reflection. Network clients always
// get the message, built from the same view: TakesWireJSON is true only
// for the method the gateway's in-process call runs, so neither a gRPC
// client nor a call a handler makes in turn is ever answered with bytes
// it cannot read.
//
// The bytes travel as the only unknown field of an otherwise empty
// message, number wireJSONField, so they go through the response cache's
// proto encoding (stored and served again as they are) and need no side
// table between the handler and the marshaler.
const wireJSONField protowire.Number = protowire.MaxValidNumber

// inProcessMethodKey names, in a handler's context, the method the gateway
// called in process.
type inProcessMethodKey struct{}

// TakesWireJSON reports whether the call of ctx is the gateway's in-process
// call of its method, whose answer may carry its wire JSON (WithWireJSON).
func TakesWireJSON(ctx context.Context) bool {
	m, _ := ctx.Value(inProcessMethodKey{}).(string)
	return m != "" && m == grpc.ServerTransportStreamFromContext(ctx).Method()
}

// WithWireJSON makes the empty message m carry the wire JSON that fill
// appends (to a pooled buffer) and returns it; fill's error is returned
// as it is.
func WithWireJSON[M proto.Message](m M, fill func([]byte) ([]byte, error)) (M, error) {
	bp := jsonBuffers.Get().(*[]byte)
	b, err := fill((*bp)[:0])
	if err == nil {
		// One exact allocation for the answer: tag, length and bytes.
		raw := make([]byte, 0, protowire.SizeTag(wireJSONField)+protowire.SizeBytes(len(b)))
		raw = protowire.AppendTag(raw, wireJSONField, protowire.BytesType)
		m.ProtoReflect().SetUnknown(protowire.AppendBytes(raw, b))
	}
	if cap(b) <= maxPooledBuffer {
		*bp = b
		jsonBuffers.Put(bp)
	}
	return m, err
}

// jsonBuffers keeps the buffers WithWireJSON's answers are written into.
var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// wireJSONOf returns the wire JSON m carries, if it does (WithWireJSON).
func wireJSONOf(m proto.Message) ([]byte, bool) {
	r := m.ProtoReflect()
	if !r.IsValid() {
		return nil, false
	}
	raw := r.GetUnknown()
	if len(raw) == 0 {
		return nil, false
	}
	num, typ, n := protowire.ConsumeTag(raw)
	if n < 0 || num != wireJSONField || typ != protowire.BytesType {
		return nil, false
	}
	b, k := protowire.ConsumeBytes(raw[n:])
	if k < 0 || n+k != len(raw) {
		return nil, false
	}
	return b, true
}
