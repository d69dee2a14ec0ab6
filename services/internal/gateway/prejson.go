package gateway

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
// appends and returns it; fill's error is returned as it is.
//
// fill appends to a buffer sized after the last answer of m's type, behind
// room for the field's tag and length: the field is written in front of
// the JSON in place, so the answer takes one allocation and no copy.
func WithWireJSON[M proto.Message](m M, fill func([]byte) ([]byte, error)) (M, error) {
	r := m.ProtoReflect()
	hint := wireHintOf(r.Descriptor().FullName())
	b, err := fill(make([]byte, wirePrefix, wirePrefix+int(min(hint.Load(), maxWireHint))))
	if err != nil {
		return m, err
	}
	n := len(b) - wirePrefix
	hint.Store(int64(n + n/4))
	start := wirePrefix - protowire.SizeTag(wireJSONField) - protowire.SizeVarint(uint64(n))
	protowire.AppendVarint(protowire.AppendTag(b[start:start], wireJSONField, protowire.BytesType), uint64(n))
	r.SetUnknown(b[start:len(b):len(b)])
	return m, nil
}

// wirePrefix is the room for the field's tag and length.
var wirePrefix = protowire.SizeTag(wireJSONField) + binary.MaxVarintLen64

// maxWireHint bounds the buffer a hint asks for (a huge answer once does
// not make every later one allocate as much).
const maxWireHint = 1 << 20

// wireHints are the last answer sizes (and a quarter) per message type.
var wireHints sync.Map

func wireHintOf(name protoreflect.FullName) *atomic.Int64 {
	if h, ok := wireHints.Load(name); ok {
		return h.(*atomic.Int64)
	}
	h, _ := wireHints.LoadOrStore(name, new(atomic.Int64))
	return h.(*atomic.Int64)
}

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
