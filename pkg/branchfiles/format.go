// Package branchfiles writes a branch's schema and content as files and
// applies such files to a branch: environments in files (docs/branches.md,
// "Environments in files").
//
// An export is a directory of one JSON file per object, named by the
// object's GUID, with every reference between objects written as the
// target's ApiIdentifier or GUID (never an id, which differs between
// installations), and the files of binary proxy objects next to them under
// their MD5. Nothing volatile goes in (ids, transactions, times), so the
// same branch exports to the same bytes on SQLite and PostgreSQL, and a
// directory under version control diffs by object and value.
//
// The import goes through the Management API over HTTP (client.go): the
// server's own write path, so validation, permissions, the outbox, the
// index and the webhooks see an import as any other write.
package branchfiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
)

// Limits of what an export holds and an import reads.
const (
	// MaxObjects caps the objects of one export or import.
	MaxObjects = 100_000
	// MaxObjectFileBytes caps one object's file: it must fit one write
	// request (edge.maxBodyBytes, 4 MiB by default) with room to spare.
	MaxObjectFileBytes = 2 << 20
	// MaxValues caps the values of one object.
	MaxValues = 10_000
)

// Directories of an export.
const (
	TypesDir      = "types"      // objects of typeRef 0 (custom types)
	AttributesDir = "attributes" // objects of typeRef 10 (custom attributes)
	ObjectsDir    = "objects"    // every other object, in a folder per type
	FilesDir      = "files"      // the content of binary proxy objects
)

// Object is one object of a branch as exported: its identity, its type and
// the values the branch shows of it (inherited ones included).
type Object struct {
	GUID          string `json:"guid"`
	APIIdentifier string `json:"apiIdentifier,omitempty"`
	// Type names the object's type (its ApiIdentifier, else its GUID).
	Type   string  `json:"type"`
	Values []Value `json:"values"`
}

// Value is one value row. Attribute, Language, Variant and Unit name
// objects like Type; an absent language or variant is 0 (none). A
// reference value (data types ObjRef and BinRef*) holds the name of the
// object it refers to.
type Value struct {
	Attribute   string          `json:"attribute"`
	Language    string          `json:"language,omitempty"`
	Variant     string          `json:"variant,omitempty"`
	Value       json.RawMessage `json:"value"`
	SortReverse int64           `json:"sortReverse,omitempty"`
	Unit        string          `json:"unit,omitempty"`
}

// group is the (attribute, language, variant) a value belongs to.
func (v Value) group() [3]string { return [3]string{v.Attribute, v.Language, v.Variant} }

// Encode is the object's file: indented JSON, keys in a fixed order, values
// sorted by attribute, language and variant (rows of one multi-valued group
// keep their order), one trailing newline.
func Encode(o Object) ([]byte, error) {
	o.Values = sortedValues(o.Values)
	if o.Values == nil {
		o.Values = []Value{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(o); err != nil {
		return nil, fmt.Errorf("object %s: %w", o.GUID, err)
	}
	if buf.Len() > MaxObjectFileBytes {
		return nil, fmt.Errorf("object %s: its file has %d bytes, the limit is %d", o.GUID, buf.Len(), MaxObjectFileBytes)
	}
	return buf.Bytes(), nil
}

// sortedValues is vs in file order (a copy).
func sortedValues(vs []Value) []Value {
	out := append([]Value(nil), vs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].group(), out[j].group()
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	return out
}

// guidPattern is a GUID as the store writes it (lower case).
var guidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Decode reads one object file: its size, fields and values checked (no
// unknown field, scalar values only, so nesting is bounded by the format).
func Decode(data []byte) (Object, error) {
	var o Object
	if len(data) > MaxObjectFileBytes {
		return o, fmt.Errorf("%d bytes, the limit is %d", len(data), MaxObjectFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, err
	}
	if dec.More() {
		return o, fmt.Errorf("more than one JSON document")
	}
	if !guidPattern.MatchString(o.GUID) {
		return o, fmt.Errorf("guid %q is not a lower-case GUID", o.GUID)
	}
	if o.Type == "" {
		return o, fmt.Errorf("object %s has no type", o.GUID)
	}
	if len(o.Values) > MaxValues {
		return o, fmt.Errorf("object %s has %d values, the limit is %d", o.GUID, len(o.Values), MaxValues)
	}
	for i, v := range o.Values {
		if v.Attribute == "" {
			return o, fmt.Errorf("object %s: values[%d] has no attribute", o.GUID, i)
		}
		if len(v.Value) == 0 || v.Value[0] == '{' || v.Value[0] == '[' {
			return o, fmt.Errorf("object %s: values[%d]: a value is a string, a number, a boolean or null", o.GUID, i)
		}
	}
	return o, nil
}

// safeName is a name usable as a file or folder name as it is.
var safeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$`)

// folderName is the folder of a type's objects: its name when that is a
// safe file name, else its GUID.
func folderName(typeName, typeGUID string) string {
	if safeName.MatchString(typeName) {
		return typeName
	}
	return typeGUID
}
