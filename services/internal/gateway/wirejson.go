package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// dotNetTime is the .NET round-trip ("o") format NovaDB writes, with up to
// seven fractional digits; trailing zeros are dropped after formatting.
const dotNetTime = "2006-01-02T15:04:05.0000000Z"

// FormatTime writes t in NovaDB's wire form: UTC, up to 7 fractional digits,
// trailing zeros (and a bare dot) dropped: "2024-05-01T10:00:00.1234567Z".
func FormatTime(t time.Time) string {
	s := t.UTC().Format(dotNetTime)
	frac := s[20 : len(s)-1] // the seven digits between "." and "Z"
	trimmed := bytes.TrimRight([]byte(frac), "0")
	if len(trimmed) == 0 {
		return s[:19] + "Z"
	}
	return s[:20] + string(trimmed) + "Z"
}

// encodeMessage appends the NovaDB JSON form of m to buf. Unlike protojson it
// writes int64 as numbers, keeps zero-valued plain scalars, writes repeated
// fields as [] unless marked omit_empty, and omits unset optional fields
// unless marked emit_null.
func encodeMessage(buf *bytes.Buffer, m protoreflect.Message) error {
	if handled, err := encodeWellKnown(buf, m); handled {
		return err
	}
	buf.WriteByte('{')
	fields := m.Descriptor().Fields()
	first := true
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		write, asNull := fieldPresence(m, fd)
		if !write {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		writeString(buf, fd.JSONName())
		buf.WriteByte(':')
		if asNull {
			buf.WriteString("null")
			continue
		}
		if err := encodeField(buf, fd, m.Get(fd)); err != nil {
			return fmt.Errorf("%s: %w", fd.FullName(), err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// fieldPresence reports whether fd is written and whether it is written as null.
func fieldPresence(m protoreflect.Message, fd protoreflect.FieldDescriptor) (write, asNull bool) {
	opts, _ := fd.Options().(*descriptorpb.FieldOptions)
	switch {
	case fd.IsList() || fd.IsMap():
		empty := (fd.IsList() && m.Get(fd).List().Len() == 0) || (fd.IsMap() && m.Get(fd).Map().Len() == 0)
		if empty && opts != nil && proto.GetExtension(opts, optionsv1.E_OmitEmpty).(bool) {
			return false, false
		}
		return true, false
	case fd.HasPresence():
		if m.Has(fd) {
			return true, false
		}
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			return false, false
		}
		if opts != nil && proto.GetExtension(opts, optionsv1.E_EmitNull).(bool) {
			return true, true
		}
		return false, false
	default:
		return true, false
	}
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
		buf.WriteString(strconv.FormatBool(v.Bool()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	case protoreflect.EnumKind:
		buf.WriteString(strconv.FormatInt(int64(v.Enum()), 10))
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

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	// encoding/json escapes <, > and & for HTML; NovaDB (Newtonsoft) does not.
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	buf.Write(b)
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
		writeString(buf, FormatTime(time.Unix(secs, nanos)))
		return true, nil
	case "google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.ListValue",
		"google.protobuf.Duration", "google.protobuf.FieldMask", "google.protobuf.Any",
		"google.protobuf.StringValue", "google.protobuf.BoolValue", "google.protobuf.DoubleValue",
		"google.protobuf.FloatValue", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BytesValue":
		b, err := protojson.Marshal(m.Interface())
		if err != nil {
			return true, err
		}
		// protojson adds random whitespace on purpose; compact it so the
		// output is stable (ETags are hashes of it).
		return true, json.Compact(buf, b)
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
