package model

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// DisplayNameAttributes returns the attributes an object's display name is
// read from, in order: the attribute its type names through
// AttrTypeDisplayName (typeNameAttr; 0 = none), then AttrName. Each is
// looked up along the whole variant and language fallback before the next
// is tried.
func DisplayNameAttributes(typeNameAttr int64) []int64 {
	if typeNameAttr == 0 || typeNameAttr == AttrName {
		return []int64{AttrName}
	}
	return []int64{typeNameAttr, AttrName}
}

// DisplayName returns an object's display name: the first value selected
// returns for DisplayNameAttributes(typeNameAttr). selected picks an
// attribute's value along the reader's fallbacks (for one language: its
// LanguageChain, variant 0).
func DisplayName[V any](typeNameAttr int64, selected func(attr int64) (V, bool)) (V, bool) {
	for _, a := range DisplayNameAttributes(typeNameAttr) {
		if v, ok := selected(a); ok {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// TypeDisplayNameAttribute reads the display-name attribute a type names:
// raw is its AttrTypeDisplayName value (an object reference).
func TypeDisplayNameAttribute(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

// DisplayString is a display-name value as shown: strings as they are,
// numbers in their shortest decimal form, booleans "true"/"false";
// anything else (null, markup objects) shows nothing.
func DisplayString(raw json.RawMessage) string {
	if s, ok := PlainString(raw); ok {
		return s
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	return ""
}

// PlainString reads a JSON string literal without escapes, as
// encoding/json would; ok is false for anything else (escapes, control
// characters, invalid UTF-8), which the caller decodes with encoding/json.
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}
