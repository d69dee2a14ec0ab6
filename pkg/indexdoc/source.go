package indexdoc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// FieldSource (search.Stored) holds the object's resolved state as JSON
// (Source): what the Delivery group renders objects from, since it reads
// the index only and has no store. It is returned, never searched.
const FieldSource = "source"

// Source is the decoded FieldSource of an object document: its metadata
// and its effective values on the document's branch (inheritance
// resolved, nulls dropped), ordered by attribute, language, variant and
// sortReverse.
type Source struct {
	ID              int64         `json:"id"`
	GUID            string        `json:"guid"`
	APIIdentifier   string        `json:"apiIdentifier,omitempty"`
	TypeRef         int64         `json:"typeRef"`
	LastTransaction int64         `json:"lastTransaction"`
	Modified        time.Time     `json:"modified,omitzero"` // full precision
	Deleted         bool          `json:"deleted,omitempty"`
	Values          []SourceValue `json:"values,omitempty"`
}

// SourceValue is one value row.
type SourceValue struct {
	Attr        int64 `json:"a"`
	Lang        int64 `json:"l,omitempty"`
	Variant     int64 `json:"v,omitempty"`
	SortReverse int64 `json:"s,omitempty"`
	// DataType is the attribute's data type (attribute 1001) when known.
	DataType string `json:"t,omitempty"`
	// Unit is the value's unit (CmsValue.unitRef, an object of type 30);
	// 0 = none. Documents indexed before it existed lack it (reindex).
	Unit int64 `json:"u,omitempty"`
	// Value is the stored JSON value (a scalar: string, number or bool).
	Value json.RawMessage `json:"x"`
}

// DecodeSource reads the FieldSource of a document or hit's fields.
// A document without one (written before the field existed) is an error
// wrapping search.ErrInvalidDocument: it needs a reindex.
func DecodeSource(fields map[string]any) (Source, error) {
	raw, ok := fields[FieldSource].(string)
	if !ok {
		return Source{}, fmt.Errorf("%w: document has no %s (reindex needed)", search.ErrInvalidDocument, FieldSource)
	}
	b := []byte(raw)
	if src, ok := decodeSourceFast(b); ok {
		return src, nil
	}
	var src Source
	if err := json.Unmarshal(b, &src); err != nil {
		return Source{}, fmt.Errorf("%w: %s: %v", search.ErrInvalidDocument, FieldSource, err)
	}
	return src, nil
}
