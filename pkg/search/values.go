package search

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Normalize validates a document against the mapping and returns a copy of its
// fields with canonical values: string, int64, float64, bool, time.Time (UTC,
// millisecond precision), or []any of those for a multi-valued field. Nil
// values and empty slices are dropped (the field is absent). Accepted inputs:
// strings for keyword/text; any Go integer, integral float or json.Number for
// long; any number for double; bool; time.Time or an RFC 3339 string for date;
// slices of these.
func (m Mapping) Normalize(doc Document) (map[string]any, error) {
	if doc.ID == "" || len(doc.ID) > 512 {
		return nil, fmt.Errorf("%w: id must have 1..512 bytes", ErrInvalidDocument)
	}
	if doc.Version < 1 {
		return nil, fmt.Errorf("%w: %q: version %d < 1", ErrInvalidDocument, doc.ID, doc.Version)
	}
	out := make(map[string]any, len(doc.Fields))
	for name, v := range doc.Fields {
		k, ok := m.Field(name)
		if !ok {
			return nil, fmt.Errorf("%w: %q: field %q is not mapped", ErrInvalidDocument, doc.ID, name)
		}
		nv, err := normalizeField(k, v)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: field %q: %v", ErrInvalidDocument, doc.ID, name, err)
		}
		if nv != nil {
			out[name] = nv
		}
	}
	return out, nil
}

func normalizeField(k Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	if (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Type().Elem().Kind() != reflect.Uint8 {
		if rv.Len() == 0 {
			return nil, nil
		}
		vals := make([]any, 0, rv.Len())
		for i := range rv.Len() {
			e := rv.Index(i).Interface()
			if e == nil {
				continue
			}
			ne, err := NormalizeValue(k, e)
			if err != nil {
				return nil, err
			}
			vals = append(vals, ne)
		}
		if len(vals) == 0 {
			return nil, nil
		}
		return vals, nil
	}
	return NormalizeValue(k, v)
}

// NormalizeValue converts one scalar value to the canonical type of kind k
// (see Mapping.Normalize). Query values go through it too.
func NormalizeValue(k Kind, v any) (any, error) {
	switch k {
	case Keyword, Text, Stored:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Long:
		return toInt64(v)
	case Double:
		f, err := toFloat64(v)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not a finite number", f)
		}
		return f, nil
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Date:
		switch t := v.(type) {
		case time.Time:
			return t.UTC().Truncate(dateUnit), nil
		case string:
			p, err := time.Parse(time.RFC3339Nano, t)
			if err != nil {
				return nil, err
			}
			return p.UTC().Truncate(dateUnit), nil
		}
	default:
		return nil, fmt.Errorf("unknown kind %q", k)
	}
	return nil, fmt.Errorf("%T is not a %s value", v, k)
}

func toInt64(v any) (int64, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if rv.Uint() > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows int64", rv.Uint())
		}
		return int64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, fmt.Errorf("%v is not an integer", f)
		}
		return int64(f), nil
	}
	if n, ok := v.(json.Number); ok {
		return n.Int64()
	}
	return 0, fmt.Errorf("%T is not a long value", v)
}

func toFloat64(v any) (float64, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	if n, ok := v.(json.Number); ok {
		return n.Float64()
	}
	return 0, fmt.Errorf("%T is not a double value", v)
}

// EncodeSource encodes normalised fields as JSON (the stored source).
func EncodeSource(fields map[string]any) ([]byte, error) { return json.Marshal(fields) }

// DecodeSource decodes a stored JSON source back into normalised fields.
// Fields that are no longer mapped are dropped.
func (m Mapping) DecodeSource(raw []byte) (map[string]any, error) {
	var src map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&src); err != nil {
		return nil, fmt.Errorf("search: decode source: %w", err)
	}
	out := make(map[string]any, len(src))
	for name, v := range src {
		k, ok := m.Field(name)
		if !ok {
			continue
		}
		nv, err := normalizeField(k, v)
		if err != nil {
			return nil, fmt.Errorf("search: decode source field %q: %w", name, err)
		}
		if nv != nil {
			out[name] = nv
		}
	}
	return out, nil
}

// FormatKey renders a canonical value as the string implementations use to
// group terms: dates as Unix milliseconds, bools as "true"/"false", numbers in
// the shortest form that round-trips.
func FormatKey(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case time.Time:
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return fmt.Sprint(v)
}

// ParseKey is the inverse of FormatKey for a field of kind k.
func ParseKey(k Kind, s string) (any, error) {
	switch k {
	case Keyword, Text, Stored:
		return s, nil
	case Long:
		return strconv.ParseInt(s, 10, 64)
	case Double:
		return strconv.ParseFloat(s, 64)
	case Bool:
		return strconv.ParseBool(s)
	case Date:
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, err
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	return nil, fmt.Errorf("search: unknown kind %q", k)
}

// CompareValues orders two canonical values of the same kind (false < true).
func CompareValues(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case int64:
		y, _ := b.(int64)
		return cmp.Compare(x, y)
	case float64:
		y, _ := b.(float64)
		return cmp.Compare(x, y)
	case bool:
		y, _ := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case time.Time:
		y, _ := b.(time.Time)
		return x.Compare(y)
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// TopBuckets orders bs (SortBuckets) and keeps the first size of them;
// other is the sum of the counts cut off (a terms aggregation's Other).
func TopBuckets(bs []Bucket, size int) (top []Bucket, other int64) {
	SortBuckets(bs)
	if len(bs) <= size {
		return bs, 0
	}
	for _, b := range bs[size:] {
		other += b.Count
	}
	return bs[:size], other
}

// SortBuckets orders buckets by Count descending, then Key ascending.
func SortBuckets(bs []Bucket) {
	slices.SortFunc(bs, func(a, b Bucket) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return CompareValues(a.Key, b.Key)
	})
}

// In-memory sorting. Some orders have no engine sort field (a value
// picked from a keyed multi-valued field, say); readers then fetch the
// matches and sort them with these helpers, which follow the engines'
// rules so both paths agree: a multi-valued field sorts by its smallest
// value ascending and its largest descending, documents without a value
// sort last in both directions.

// KeyedValues returns the values of a keyword field as Hit.Fields holds
// it (a string or a []any of strings) that start with prefix, with the
// prefix cut: the entries of one key of a keyed multi-valued field.
func KeyedValues(field any, prefix string) []string {
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok {
			if rest, ok := strings.CutPrefix(s, prefix); ok {
				out = append(out, rest)
			}
		}
	}
	if vs, ok := field.([]any); ok {
		for _, v := range vs {
			add(v)
		}
	} else {
		add(field)
	}
	return out
}

// SortValue returns the value a sort uses for a field with values vals
// (canonical values of one kind): the smallest, or the largest when desc;
// nil (missing) when vals is empty.
func SortValue(vals []any, desc bool) any {
	var best any
	for _, v := range vals {
		if v == nil {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		if c := CompareValues(v, best); (desc && c > 0) || (!desc && c < 0) {
			best = v
		}
	}
	return best
}

// CompareSortValues compares two sort values (canonical values of one
// kind, nil = missing) for a sort in one direction: present values by
// CompareValues, reversed when desc; missing values after every present
// one, in both directions.
func CompareSortValues(a, b any, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	c := CompareValues(a, b)
	if desc {
		return -c
	}
	return c
}

// SortByKeys sorts items stably by their sort values: key returns one
// value per sort key (nil = missing), computed once per item; key i sorts
// descending when desc[i]; items equal on every key are ordered by tie.
func SortByKeys[T any](items []T, key func(T) []any, desc []bool, tie func(a, b T) int) {
	type keyed struct {
		item T
		keys []any
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		ks[i] = keyed{item: it, keys: key(it)}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		for i := range min(len(a.keys), len(b.keys)) {
			d := i < len(desc) && desc[i]
			if c := CompareSortValues(a.keys[i], b.keys[i], d); c != 0 {
				return c
			}
		}
		if tie == nil {
			return 0
		}
		return tie(a.item, b.item)
	})
	for i := range ks {
		items[i] = ks[i].item
	}
}
