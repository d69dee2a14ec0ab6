package indexdoc

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// decodeSourceFast decodes the JSON of a Source in the form the indexer
// writes it (encoding/json's compact output of Source) without reflection:
// the object keys exactly as Source names them, each at most once, no
// space, int64 fields as integers, strings other than the values without
// escapes, each value a JSON scalar. Anything else (ok false) is left to
// encoding/json, so the result is always what json.Unmarshal makes of b.
// The values' raw JSON points into b (capacity capped to their length):
// b must not be modified afterwards.
func decodeSourceFast(b []byte) (src Source, ok bool) {
	p := sourceParser{b: b}
	var seen uint16
	if !p.eat('{') {
		return Source{}, false
	}
	if p.eat('}') {
		return src, p.i == len(b)
	}
	for {
		k, ok := p.key()
		if !ok {
			return Source{}, false
		}
		bit, ok := sourceKeys[string(k)]
		if !ok || seen&bit != 0 {
			return Source{}, false
		}
		seen |= bit
		switch string(k) {
		case "id":
			src.ID, ok = p.integer()
		case "guid":
			src.GUID, ok = p.str()
		case "apiIdentifier":
			src.APIIdentifier, ok = p.str()
		case "typeRef":
			src.TypeRef, ok = p.integer()
		case "lastTransaction":
			src.LastTransaction, ok = p.integer()
		case "modified":
			src.Modified, ok = p.timestamp()
		case "deleted":
			src.Deleted, ok = p.boolean()
		case "values":
			src.Values, ok = p.values()
		}
		if !ok {
			return Source{}, false
		}
		if p.eat('}') {
			return src, p.i == len(b)
		}
		if !p.eat(',') {
			return Source{}, false
		}
	}
}

// sourceKeys are Source's JSON keys, one bit each (a repeated key is left
// to encoding/json).
var sourceKeys = map[string]uint16{"id": 1, "guid": 2, "apiIdentifier": 4, "typeRef": 8, "lastTransaction": 16,
	"modified": 32, "deleted": 64, "values": 128}

// valueKeys are SourceValue's.
var valueKeys = map[string]uint8{"a": 1, "l": 2, "v": 4, "s": 8, "t": 16, "u": 32, "x": 64}

// dataTypes interns the data type names of the values (a few names,
// repeated in every source).
var dataTypes = map[string]string{}

func init() {
	for _, dt := range []string{"String", "ObjRef", "Boolean", "Decimal", "Integer", "Long", "DateTime", "Date", "Time",
		"XmlRef", "XmlRef.SimpleHtml", "XmlRef.Html", "BinRef", "BinRef.Image", "Url", "Guid", "Text"} {
		dataTypes[dt] = dt
	}
}

type sourceParser struct {
	b []byte
	i int
}

// eat consumes c if it comes next.
func (p *sourceParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plain returns the contents of a string without escapes or control
// characters (false for any other string, or none).
func (p *sourceParser) plain() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// key reads an object key and its colon.
func (p *sourceParser) key() ([]byte, bool) {
	k, ok := p.plain()
	return k, ok && p.eat(':')
}

// str reads a plain, valid UTF-8 string (encoding/json replaces invalid
// bytes: left to it).
func (p *sourceParser) str() (string, bool) {
	s, ok := p.plain()
	if !ok || !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}

// integer reads an integer as encoding/json reads one into an int64.
func (p *sourceParser) integer() (int64, bool) {
	start := p.i
	p.eat('-')
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - digits
	if n == 0 || n > 19 || (p.b[digits] == '0' && n > 1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return v, err == nil
}

func (p *sourceParser) boolean() (bool, bool) {
	switch {
	case p.lit("true"):
		return true, true
	case p.lit("false"):
		return false, true
	}
	return false, false
}

func (p *sourceParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// timestamp reads a quoted time as time.Time's UnmarshalJSON does.
func (p *sourceParser) timestamp() (time.Time, bool) {
	start := p.i
	if _, ok := p.plain(); !ok {
		return time.Time{}, false
	}
	var t time.Time
	return t, t.UnmarshalJSON(p.b[start:p.i]) == nil
}

// values reads the value rows.
func (p *sourceParser) values() ([]SourceValue, bool) {
	if !p.eat('[') {
		return nil, false
	}
	out := make([]SourceValue, 0, 8)
	if p.eat(']') {
		return out, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.eat(']') {
			return out, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// value reads one value row.
func (p *sourceParser) value() (v SourceValue, ok bool) {
	if !p.eat('{') {
		return v, false
	}
	if p.eat('}') {
		return v, true
	}
	var seen uint8
	for {
		k, ok := p.key()
		if !ok {
			return v, false
		}
		bit, ok := valueKeys[string(k)]
		if !ok || seen&bit != 0 {
			return v, false
		}
		seen |= bit
		switch k[0] {
		case 'a':
			v.Attr, ok = p.integer()
		case 'l':
			v.Lang, ok = p.integer()
		case 'v':
			v.Variant, ok = p.integer()
		case 's':
			v.SortReverse, ok = p.integer()
		case 'u':
			v.Unit, ok = p.integer()
		case 't':
			var dt []byte
			if dt, ok = p.plain(); ok {
				if v.DataType, ok = dataTypes[string(dt)]; !ok && utf8.Valid(dt) {
					v.DataType, ok = string(dt), true
				}
			}
		case 'x':
			start := p.i
			if ok = p.scalar(); ok {
				v.Value = p.b[start:p.i:p.i]
			}
		}
		if !ok {
			return v, false
		}
		if p.eat('}') {
			return v, true
		}
		if !p.eat(',') {
			return v, false
		}
	}
}

// scalar skips a valid JSON string, number, true, false or null.
func (p *sourceParser) scalar() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return p.skipNumber()
	}
	return p.lit("true") || p.lit("false") || p.lit("null")
}

// skipString skips a valid JSON string: escapes checked, no control
// characters (any other byte is valid JSON, as encoding/json's scanner
// takes it).
func (p *sourceParser) skipString() bool {
	p.i++ // the quote
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(p.b)-p.i < 5 {
					return false
				}
				for _, h := range p.b[p.i+1 : p.i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				p.i += 4
			default:
				return false
			}
		}
		p.i++
	}
	return false
}

// skipNumber skips a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *sourceParser) skipNumber() bool {
	p.eat('-')
	digits := func() int {
		start := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i - start
	}
	if !p.eat('0') && digits() == 0 {
		return false
	}
	if p.eat('.') && digits() == 0 {
		return false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
