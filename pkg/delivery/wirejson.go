package delivery

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/wirejson"
)

// The Delivery answers in NovaDB's JSON wire form, written straight from
// the rendered view: the bytes the gateway writes for the gRPC messages
// of the same answers (cms.delivery.v1 ObjectResult, ObjectList, Object,
// ObjectMeta; see docs/api-reference.md §7), without building those
// messages. Field order and names are the messages'; meta ids and the
// display icon are int32 as there; props and reverse are
// google.protobuf.Struct values as protojson writes them (keys sorted,
// numbers as numbers, int64 through float64, no HTML escaping, invalid
// UTF-8 and non-finite numbers refused); the other strings are escaped as
// the gateway escapes string fields and must be UTF-8, as protobuf
// strings must.

// errInvalidUTF8 refuses a string field that is not UTF-8, as the
// protobuf encoding of the message refuses it.
var errInvalidUTF8 = errors.New("delivery: string field contains invalid UTF-8")

// AppendSingleJSON appends the JSON of a Get answer: {"obj":…} and, when
// anything was resolved, "refs":[…].
func AppendSingleJSON(b []byte, s Single) ([]byte, error) {
	b = append(b, `{"obj":`...)
	b, err := appendObjectJSON(b, &s.Obj)
	if err != nil {
		return b, err
	}
	if len(s.Refs) > 0 {
		b = append(b, `,"refs":`...)
		if b, err = appendObjectsJSON(b, s.Refs); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// AppendListJSON appends the JSON of a List answer:
// {"skip":…,"count":…,"more":…,"objs":[…],"refs":[…]}.
func AppendListJSON(b []byte, l List) ([]byte, error) {
	b = append(b, `{"skip":`...)
	b = strconv.AppendInt(b, int64(int32(l.Skip)), 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(int32(l.Count)), 10)
	b = append(b, `,"more":`...)
	b = strconv.AppendBool(b, l.More)
	b = append(b, `,"objs":`...)
	b, err := appendObjectsJSON(b, l.Objs)
	if err != nil {
		return b, err
	}
	b = append(b, `,"refs":`...)
	if b, err = appendObjectsJSON(b, l.Refs); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendObjectsJSON(b []byte, objs []Object) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i := range objs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendObjectJSON(b, &objs[i]); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendObjectJSON appends one object.
func appendObjectJSON(b []byte, o *Object) ([]byte, error) {
	m := &o.Meta
	if !utf8.ValidString(o.DisplayName) || !utf8.ValidString(m.GUID) || !utf8.ValidString(m.APIIdentifier) ||
		!utf8.ValidString(m.Type) || !utf8.ValidString(m.ETag) {
		return b, errInvalidUTF8
	}
	b = append(b, `{"displayName":`...)
	b = wirejson.AppendString(b, o.DisplayName)
	if o.DisplayIcon != nil {
		b = append(b, `,"displayIcon":`...)
		b = strconv.AppendInt(b, int64(int32(*o.DisplayIcon)), 10)
	}
	b = append(b, `,"meta":{"id":`...)
	b = strconv.AppendInt(b, int64(int32(m.ID)), 10)
	b = append(b, `,"guid":`...)
	b = wirejson.AppendString(b, m.GUID)
	if m.APIIdentifier != "" {
		b = append(b, `,"apiIdentifier":`...)
		b = wirejson.AppendString(b, m.APIIdentifier)
	}
	b = append(b, `,"typeRef":`...)
	b = strconv.AppendInt(b, int64(int32(m.TypeRef)), 10)
	b = append(b, `,"type":`...)
	b = wirejson.AppendString(b, m.Type)
	b = append(b, `,"lastTransaction":`...)
	b = strconv.AppendInt(b, m.LastTransaction, 10)
	if !m.LastModified.IsZero() {
		b = append(b, `,"lastModified":"`...)
		b = append(wirejson.AppendTime(b, m.LastModified), '"')
	}
	b = append(b, `,"deleted":`...)
	b = strconv.AppendBool(b, m.Deleted)
	b = append(b, `,"etag":`...)
	b = wirejson.AppendString(b, m.ETag)
	b = append(b, `},"props":`...)
	b, err := appendStructJSON(b, o.Props)
	if err != nil {
		return b, err
	}
	if o.Reverse != nil {
		b = append(b, `,"reverse":`...)
		if b, err = appendReverseJSON(b, o.Reverse); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendReverseJSON appends reverse relations: attribute → list of ids.
func appendReverseJSON(b []byte, rev map[string][]int64) ([]byte, error) {
	var small [8]string
	b = append(b, '{')
	var err error
	for i, k := range sortedKeys(small[:0], rev) {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = wirejson.AppendStructString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':', '[')
		for j, id := range rev[k] {
			if j > 0 {
				b = append(b, ',')
			}
			b = wirejson.AppendNumber(b, float64(id))
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendStructJSON appends a props map as a google.protobuf.Struct.
func appendStructJSON(b []byte, m map[string]any) ([]byte, error) {
	var small [16]string
	b = append(b, '{')
	var err error
	for i, k := range sortedKeys(small[:0], m) {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = wirejson.AppendStructString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = appendValueJSON(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendValueJSON appends a props value as the google.protobuf.Value
// structpb.NewValue makes of it.
func appendValueJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return wirejson.AppendStructString(b, x)
	case int64:
		return appendNumberJSON(b, float64(x))
	case float64:
		return appendNumberJSON(b, x)
	case bool:
		return strconv.AppendBool(b, x), nil
	case []any:
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValueJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return appendStructJSON(b, x)
	case int:
		return appendNumberJSON(b, float64(x))
	case int8:
		return appendNumberJSON(b, float64(x))
	case int16:
		return appendNumberJSON(b, float64(x))
	case int32:
		return appendNumberJSON(b, float64(x))
	case uint:
		return appendNumberJSON(b, float64(x))
	case uint8:
		return appendNumberJSON(b, float64(x))
	case uint16:
		return appendNumberJSON(b, float64(x))
	case uint32:
		return appendNumberJSON(b, float64(x))
	case uint64:
		return appendNumberJSON(b, float64(x))
	case float32:
		return appendNumberJSON(b, float64(x))
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return b, fmt.Errorf("delivery: invalid number %q: %w", x, err)
		}
		return appendNumberJSON(b, f)
	case []byte:
		return wirejson.AppendStructString(b, base64.StdEncoding.EncodeToString(x))
	}
	return b, fmt.Errorf("delivery: a props value of type %T has no JSON form", v)
}

// appendNumberJSON appends a finite number; NaN and infinities have no
// JSON form.
func appendNumberJSON(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("delivery: invalid number %v", f)
	}
	return wirejson.AppendNumber(b, f), nil
}
