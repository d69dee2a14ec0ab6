package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// DecodeSourceFields is DecodeSource for the named fields only: the
// source is scanned and the other fields are skipped without being
// decoded, so a reader that needs one stored field of a document with
// hundreds of values pays for that field.
func (m Mapping) DecodeSourceFields(raw []byte, names []string) (map[string]any, error) {
	out := make(map[string]any, len(names))
	err := eachSourceField(raw, func(raw []byte, val []byte) error {
		// The name as names holds it: no string made of each member's.
		at := slices.IndexFunc(names, func(n string) bool { return n == string(raw) })
		if at < 0 {
			return nil
		}
		name := names[at]
		k, ok := m.Field(name)
		if !ok {
			return nil
		}
		var v any
		if val[0] == '"' { // a string (a stored source): no interface decoding
			str, ok := unquoteSimple(val)
			if !ok {
				if err := json.Unmarshal(val, &str); err != nil {
					return fmt.Errorf("search: decode source field %q: %w", name, err)
				}
			}
			v = str
		} else {
			dec := json.NewDecoder(bytes.NewReader(val))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("search: decode source field %q: %w", name, err)
			}
		}
		nv, err := normalizeField(k, v)
		if err != nil {
			return fmt.Errorf("search: decode source field %q: %w", name, err)
		}
		if nv != nil {
			out[name] = nv
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var errSource = errors.New("search: decode source: malformed JSON object")

// unquoteSimple is json.Unmarshal of the JSON string lit into a string
// when lit's escapes are the one-character ones (\" \\ \/ \b \f \n \r
// \t: a stored source's quotes and backslashes) and it is valid UTF-8
// without control characters; ok is false for anything else (\u escapes,
// invalid bytes, a malformed literal), left to encoding/json.
func unquoteSimple(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	in := lit[1 : len(lit)-1]
	if !utf8.Valid(in) {
		return "", false
	}
	var out strings.Builder
	out.Grow(len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c < 0x20 || c == '"':
			return "", false
		case c != '\\':
			out.WriteByte(c)
			continue
		}
		if i++; i == len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out.WriteByte(in[i])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		default:
			return "", false
		}
	}
	return out.String(), true
}

// eachSourceField calls fn with the name and raw value of each member of
// the JSON object raw (as EncodeSource writes it: names are field names,
// which need no escapes). Values are skipped, not validated: fn decodes
// those it wants.
func eachSourceField(raw []byte, fn func(name, val []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errSource
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return errSource
		}
		end, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		name := raw[i+1 : end-1]
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errSource
		}
		i = skipSpace(raw, i+1)
		end, err = skipValue(raw, i)
		if err != nil {
			return err
		}
		if err := fn(name, raw[i:end]); err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return errSource
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return nil
		default:
			return errSource
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSource
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errSource
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSource
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, errSource
	}
	return j, nil
}
