package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Kind is the kind of a mapped field. The set is deliberately small so that
// every implementation can index it the same way.
type Kind string

const (
	// Keyword is an exact string; term, terms, range, prefix, sort, aggs.
	Keyword Kind = "keyword"
	// Text is full text, tokenised with the standard analyzer (Unicode word
	// boundaries, lower-cased, no stop words, no stemming); match and prefix
	// (per token, lower-cased) only. Not sortable, not aggregatable.
	Text Kind = "text"
	// Long is a 64-bit integer. (Bleve keeps numbers as float64 internally, so
	// range/sort/term are exact only up to 2^53.)
	Long Kind = "long"
	// Double is a 64-bit float (NaN and infinities are rejected).
	Double Kind = "double"
	// Bool is true or false.
	Bool Kind = "bool"
	// Date is an instant, kept in UTC with millisecond precision.
	Date Kind = "date"
	// Stored is a string kept with the document and returned by Get and
	// Search, but not indexed: no query, sort or aggregation may use it
	// (ErrInvalidQuery). For payloads readers render from (e.g. a JSON
	// source), of any length.
	Stored Kind = "stored"
)

var kinds = []Kind{Keyword, Text, Long, Double, Bool, Date, Stored}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { return slices.Contains(kinds, k) }

// Mapping declares the fields of an index. Documents may only carry mapped
// fields; any field may be absent or multi-valued.
type Mapping struct {
	Fields map[string]Kind `json:"fields"`
	// KeywordPrefixes maps, as Keyword, every field whose name starts
	// with one of these prefixes and that Fields does not declare: for
	// dynamic families of fields (e.g. one sort key per attribute and
	// language). Elasticsearch indexes them through a dynamic template,
	// Bleve through its dynamic mapping with the keyword analyzer.
	// Elasticsearch counts every such field against the index's field
	// limit, which implementations raise to MaxDynamicFields.
	KeywordPrefixes []string `json:"keywordPrefixes,omitempty"`
}

// MaxDynamicFields bounds the fields an index may hold, KeywordPrefixes
// fields included (Elasticsearch's index.mapping.total_fields.limit,
// 1000 by default, is raised to it).
const MaxDynamicFields = 20000

// Field returns the kind of field: declared in Fields, or Keyword when it
// starts with one of KeywordPrefixes.
func (m Mapping) Field(name string) (Kind, bool) {
	if k, ok := m.Fields[name]; ok {
		return k, true
	}
	if m.Prefixed(name) {
		return Keyword, true
	}
	return "", false
}

// Prefixed reports whether name is a KeywordPrefixes field Fields does
// not declare.
func (m Mapping) Prefixed(name string) bool {
	if _, ok := m.Fields[name]; ok {
		return false
	}
	for _, p := range m.KeywordPrefixes {
		if strings.HasPrefix(name, p) && fieldName.MatchString(name) {
			return true
		}
	}
	return false
}

// fieldName: no dots (Elasticsearch would read them as object paths), no
// leading underscore or '@' (reserved for metadata and internal fields).
var fieldName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_\-]{0,199}$`)

// Validate checks field names and kinds.
func (m Mapping) Validate() error {
	if len(m.Fields) == 0 {
		return fmt.Errorf("%w: no fields", ErrInvalidMapping)
	}
	for name, k := range m.Fields {
		if !fieldName.MatchString(name) {
			return fmt.Errorf("%w: field name %q", ErrInvalidMapping, name)
		}
		if !k.Valid() {
			return fmt.Errorf("%w: field %q has unknown kind %q", ErrInvalidMapping, name, k)
		}
	}
	for _, p := range m.KeywordPrefixes {
		if !fieldName.MatchString(p) {
			return fmt.Errorf("%w: keyword prefix %q", ErrInvalidMapping, p)
		}
	}
	return nil
}

// Equal reports whether m and o declare the same fields with the same kinds.
func (m Mapping) Equal(o Mapping) bool {
	return maps.Equal(m.Fields, o.Fields) && slices.Equal(m.KeywordPrefixes, o.KeywordPrefixes)
}

// Names returns the declared field names (Fields) in sorted order.
func (m Mapping) Names() []string { return slices.Sorted(maps.Keys(m.Fields)) }

// TextFields returns the text field names in sorted order.
func (m Mapping) TextFields() []string {
	var out []string
	for _, n := range m.Names() {
		if m.Fields[n] == Text {
			out = append(out, n)
		}
	}
	return out
}

// Kind returns the kind of field, or an ErrInvalidQuery error if it is not
// mapped.
func (m Mapping) Kind(field string) (Kind, error) {
	k, ok := m.Field(field)
	if !ok {
		return "", fmt.Errorf("%w: field %q is not mapped", ErrInvalidQuery, field)
	}
	return k, nil
}

// MarshalMapping encodes m as JSON (how implementations persist it).
func MarshalMapping(m Mapping) ([]byte, error) { return json.Marshal(m) }

// UnmarshalMapping decodes a mapping written by MarshalMapping.
func UnmarshalMapping(b []byte) (Mapping, error) {
	var m Mapping
	if err := json.Unmarshal(b, &m); err != nil {
		return Mapping{}, fmt.Errorf("%w: %v", ErrInvalidMapping, err)
	}
	return m, m.Validate()
}

// ValidIndexName reports whether name can name an index in every
// implementation (Elasticsearch wants lower case and no special characters).
func ValidIndexName(name string) error {
	if !indexName.MatchString(name) {
		return fmt.Errorf("%w: index name %q (want [a-z0-9][a-z0-9_-]*, at most 100 bytes)", ErrInvalidMapping, name)
	}
	return nil
}

var indexName = regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]{0,99}$`)
