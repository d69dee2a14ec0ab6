package search

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeSourceFields is DecodeSource for the named fields only: the other
// fields of the source are skipped without being decoded (a reader that
// needs one stored field of a document with hundreds of values pays for
// that field).
func (m Mapping) DecodeSourceFields(raw []byte, names []string) (map[string]any, error) {
	var src map[string]json.RawMessage
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, fmt.Errorf("search: decode source: %w", err)
	}
	out := make(map[string]any, len(names))
	for _, name := range names {
		r, ok := src[name]
		if !ok {
			continue
		}
		k, ok := m.Field(name)
		if !ok {
			continue
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("search: decode source field %q: %w", name, err)
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
