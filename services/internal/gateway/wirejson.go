package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/wirejson"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// FormatTime writes t in NovaDB's wire form (wirejson.FormatTime).
func FormatTime(t time.Time) string { return wirejson.FormatTime(t) }

// encodeMessage appends the NovaDB JSON form of m to buf. Unlike protojson it
// writes int64 as numbers, keeps zero-valued plain scalars, writes repeated
// fields as [] unless marked omit_empty, and omits unset optional fields
// unless marked emit_null.
func encodeMessage(buf *bytes.Buffer, m protoreflect.Message) error {
	if handled, err := encodeWellKnown(buf, m); handled {
		return err
	}
	buf.WriteByte('{')
	first := true
	for _, f := range planOf(m.Descriptor()).fields {
		fd := f.fd
		var v protoreflect.Value
		asNull := false
		switch {
		case f.repeated:
			v = m.Get(fd)
			if f.omitEmpty && ((fd.IsList() && v.List().Len() == 0) || (fd.IsMap() && v.Map().Len() == 0)) {
				continue
			}
		case f.presence:
			if !m.Has(fd) {
				if !f.emitNull {
					continue
				}
				asNull = true
			} else {
				v = m.Get(fd)
			}
		default:
			v = m.Get(fd)
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.Write(f.name)
		if asNull {
			buf.WriteString("null")
			continue
		}
		if err := encodeField(buf, fd, v); err != nil {
			return fmt.Errorf("%s: %w", fd.FullName(), err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// messagePlan is what encodeMessage needs of a message type, worked out
// once per type: options are read through extensions and names escaped
// only the first time.
type messagePlan struct {
	fields []fieldPlan
}

type fieldPlan struct {
	fd       protoreflect.FieldDescriptor
	name     []byte // `"jsonName":`
	repeated bool   // list or map: written ([] or {}) unless omitEmpty and empty
	// presence: written when set; unset is omitted, or null with emitNull
	// (never for a member of a real oneof).
	presence  bool
	omitEmpty bool
	emitNull  bool
}

// plans caches a *messagePlan per message descriptor.
var plans sync.Map

func planOf(md protoreflect.MessageDescriptor) *messagePlan {
	if p, ok := plans.Load(md); ok {
		return p.(*messagePlan)
	}
	fields := md.Fields()
	p := &messagePlan{fields: make([]fieldPlan, fields.Len())}
	for i := range p.fields {
		fd := fields.Get(i)
		opts, _ := fd.Options().(*descriptorpb.FieldOptions)
		f := fieldPlan{fd: fd, name: append(wirejson.AppendString(nil, fd.JSONName()), ':')}
		switch {
		case fd.IsList() || fd.IsMap():
			f.repeated = true
			f.omitEmpty = opts != nil && proto.GetExtension(opts, optionsv1.E_OmitEmpty).(bool)
		case fd.HasPresence():
			f.presence = true
			inOneof := fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()
			f.emitNull = !inOneof && opts != nil && proto.GetExtension(opts, optionsv1.E_EmitNull).(bool)
		}
		p.fields[i] = f
	}
	actual, _ := plans.LoadOrStore(md, p)
	return actual.(*messagePlan)
}

func encodeField(buf *bytes.Buffer, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch {
	case fd.IsList():
		l := v.List()
		buf.WriteByte('[')
		for i := 0; i < l.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeSingular(buf, fd, l.Get(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case fd.IsMap():
		return encodeMap(buf, fd, v.Map())
	default:
		return encodeSingular(buf, fd, v)
	}
}

func encodeMap(buf *bytes.Buffer, fd protoreflect.FieldDescriptor, mp protoreflect.Map) error {
	keys := make([]protoreflect.MapKey, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	// Sorted keys keep output deterministic, which ETags rely on.
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k.String())
		buf.WriteByte(':')
		if err := encodeSingular(buf, fd.MapValue(), mp.Get(k)); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

func encodeSingular(buf *bytes.Buffer, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		buf.Write(strconv.AppendBool(buf.AvailableBuffer(), v.Bool()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), v.Int(), 10))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		buf.Write(strconv.AppendUint(buf.AvailableBuffer(), v.Uint(), 10))
	case protoreflect.EnumKind:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(v.Enum()), 10))
	case protoreflect.FloatKind:
		writeFloat(buf, v.Float(), 32)
	case protoreflect.DoubleKind:
		writeFloat(buf, v.Float(), 64)
	case protoreflect.StringKind:
		writeString(buf, v.String())
	case protoreflect.BytesKind:
		writeString(buf, base64.StdEncoding.EncodeToString(v.Bytes()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return encodeMessage(buf, v.Message())
	default:
		return fmt.Errorf("unsupported field kind %v", fd.Kind())
	}
	return nil
}

// writeFloat writes a JSON number; NaN and infinities have no JSON form and
// are written as null.
func writeFloat(buf *bytes.Buffer, f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		buf.WriteString("null")
		return
	}
	buf.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
}

// writeString writes s as a JSON string (wirejson.AppendString).
func writeString(buf *bytes.Buffer, s string) {
	buf.Grow(len(s) + 2) // appending past the buffer's capacity would copy twice
	buf.Write(wirejson.AppendString(buf.AvailableBuffer(), s))
}

// encodeWellKnown writes the well-known types whose JSON form is not an
// object of their fields. Timestamps use the .NET form; the JSON value types
// (Value, Struct, ListValue) and wrappers use protojson's mapping.
func encodeWellKnown(buf *bytes.Buffer, m protoreflect.Message) (bool, error) {
	switch m.Descriptor().FullName() {
	case "google.protobuf.Timestamp":
		fields := m.Descriptor().Fields()
		secs := m.Get(fields.ByName("seconds")).Int()
		nanos := m.Get(fields.ByName("nanos")).Int()
		buf.Grow(32)
		b := append(buf.AvailableBuffer(), '"')
		b = wirejson.AppendTime(b, time.Unix(secs, nanos))
		buf.Write(append(b, '"'))
		return true, nil
	case "google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.ListValue":
		if b, ok, err := appendJSONValue(buf.AvailableBuffer(), m.Interface()); ok {
			if err != nil {
				return true, err
			}
			buf.Write(b)
			return true, nil
		}
		return true, encodeWithProtoJSON(buf, m) // a dynamic message
	case "google.protobuf.Duration", "google.protobuf.FieldMask", "google.protobuf.Any",
		"google.protobuf.StringValue", "google.protobuf.BoolValue", "google.protobuf.DoubleValue",
		"google.protobuf.FloatValue", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BytesValue":
		return true, encodeWithProtoJSON(buf, m)
	case "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		// protojson quotes 64-bit wrappers; NovaDB numbers are never strings.
		v := m.Get(m.Descriptor().Fields().ByName("value"))
		if m.Descriptor().FullName() == "google.protobuf.Int64Value" {
			buf.WriteString(strconv.FormatInt(v.Int(), 10))
		} else {
			buf.WriteString(strconv.FormatUint(v.Uint(), 10))
		}
		return true, nil
	}
	return false, nil
}

// encodeWithProtoJSON writes m with protojson, compacted: protojson adds
// random whitespace on purpose, and the output must be stable (ETags are
// hashes of it).
func encodeWithProtoJSON(buf *bytes.Buffer, m protoreflect.Message) error {
	b, err := protojson.Marshal(m.Interface())
	if err != nil {
		return err
	}
	return json.Compact(buf, b)
}

// appendJSONValue appends the JSON form of a google.protobuf.Struct, Value
// or ListValue, byte for byte what protojson writes (compacted): object keys
// sorted, numbers as numbers in encoding/json's float format, strings
// escaped as protojson does (no HTML or U+2028/U+2029 escaping; invalid
// UTF-8 is an error), and the same errors for a Value without a kind or a
// non-finite number. ok is false for messages of other Go types (dynamic
// messages), which the caller encodes with protojson.
func appendJSONValue(b []byte, m proto.Message) (out []byte, ok bool, err error) {
	switch v := m.(type) {
	case *structpb.Struct:
		out, err = appendStruct(b, v)
	case *structpb.Value:
		out, err = appendValue(b, v)
	case *structpb.ListValue:
		out, err = appendList(b, v)
	default:
		return b, false, nil
	}
	return out, true, err
}

var errNoKind = errors.New("google.protobuf.Value: none of the oneof fields is set")

func appendStruct(b []byte, s *structpb.Struct) ([]byte, error) {
	fields := s.GetFields()
	var small [16]string
	keys := small[:0]
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = wirejson.AppendStructString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = appendValue(b, fields[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendList(b []byte, l *structpb.ListValue) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, v := range l.GetValues() {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendValue(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func appendValue(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return append(b, "null"...), nil
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("google.protobuf.Value.number_value: invalid %v value", f)
		}
		return wirejson.AppendNumber(b, f), nil
	case *structpb.Value_StringValue:
		return wirejson.AppendStructString(b, k.StringValue)
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	case *structpb.Value_StructValue:
		return appendStruct(b, k.StructValue)
	case *structpb.Value_ListValue:
		return appendList(b, k.ListValue)
	}
	return b, errNoKind
}
