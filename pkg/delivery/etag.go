package delivery

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"sync"
)

// etagOf hashes the rendered object, its ETag aside: SHA-256 over a
// compact, unambiguous encoding of every other returned field (strings
// length-prefixed, values type-tagged, map keys sorted), cut to 16 bytes
// and written as 22 base64url characters. The encoding has no seed, so
// every process computes the same ETag for the same object.
func etagOf(o Object) string {
	bp := etagBufs.Get().(*[]byte)
	b := appendObjectKey((*bp)[:0], &o)
	sum := sha256.Sum256(b)
	if cap(b) <= 64<<10 {
		*bp = b
		etagBufs.Put(bp)
	}
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

var etagBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Type tags of the ETag encoding.
const (
	tagNil byte = iota
	tagString
	tagInt
	tagFloat
	tagFalse
	tagTrue
	tagList
	tagMap
	tagInts
	tagOther // JSON of a type Props does not promise
	tagAbsent
)

// appendObjectKey appends the ETag encoding of o (without o.Meta.ETag).
func appendObjectKey(b []byte, o *Object) []byte {
	b = appendStr(b, o.DisplayName)
	if o.DisplayIcon == nil {
		b = append(b, tagAbsent)
	} else {
		b = appendInt(b, *o.DisplayIcon)
	}
	m := &o.Meta
	b = appendInt(b, m.ID)
	b = appendStr(b, m.GUID)
	b = appendStr(b, m.APIIdentifier)
	b = appendInt(b, m.TypeRef)
	b = appendStr(b, m.Type)
	b = appendInt(b, m.LastTransaction)
	if m.LastModified.IsZero() {
		b = append(b, tagAbsent)
	} else {
		b = appendInt(b, m.LastModified.Unix())
		b = appendInt(b, int64(m.LastModified.Nanosecond()))
	}
	b = appendBool(b, m.Deleted)
	b = appendAny(b, o.Props)
	if o.Reverse == nil {
		return append(b, tagAbsent)
	}
	b = append(b, tagMap)
	b = binary.AppendUvarint(b, uint64(len(o.Reverse)))
	var small [8]string
	for _, k := range sortedKeys(small[:0], o.Reverse) {
		ids := o.Reverse[k]
		b = appendStr(b, k)
		b = append(b, tagInts)
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = binary.AppendVarint(b, id)
		}
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = append(b, tagString)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendInt(b []byte, v int64) []byte {
	return binary.AppendVarint(append(b, tagInt), v)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, tagTrue)
	}
	return append(b, tagFalse)
}

// appendAny encodes a Props value.
func appendAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, tagNil)
	case string:
		return appendStr(b, x)
	case int64:
		return appendInt(b, x)
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x))
	case bool:
		return appendBool(b, x)
	case []any:
		b = append(b, tagList)
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, e := range x {
			b = appendAny(b, e)
		}
		return b
	case map[string]any:
		b = append(b, tagMap)
		b = binary.AppendUvarint(b, uint64(len(x)))
		var small [8]string
		for _, k := range sortedKeys(small[:0], x) {
			b = appendStr(b, k)
			b = appendAny(b, x[k])
		}
		return b
	}
	// Not a type render produces; still deterministic (encoding/json sorts
	// map keys) and still covering the value.
	j, err := json.Marshal(v)
	if err != nil {
		j = []byte(err.Error())
	}
	return appendStr(append(b, tagOther), string(j))
}

// sortedKeys appends the keys of m to keys, sorted.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
