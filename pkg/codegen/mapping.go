package codegen

import (
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/model"
)

// kind is what a data type (attribute 1001) holds; the languages map
// kinds to their types (csharpType, tsType; docs/codegen.md has the table).
type kind int

const (
	kindAny kind = iota // unknown or missing data type: any scalar
	kindString
	kindInteger
	kindDecimal
	kindFloat
	kindBool
	kindDateTime
	kindDate
	kindRef
	kindXML
)

// kindOf maps a data type name to its kind: the String and TextRef
// families are strings, ObjRef and the BinRef family references,
// XmlRef.* markup; anything else unknown is kindAny.
func kindOf(dataType string) kind {
	switch dataType {
	case "Integer":
		return kindInteger
	case "Decimal":
		return kindDecimal
	case "Float":
		return kindFloat
	case "Boolean":
		return kindBool
	case "DateTime":
		return kindDateTime
	case "DateTime.Date":
		return kindDate
	}
	switch {
	case model.IsReference(dataType):
		return kindRef
	case model.IsMarkup(dataType):
		return kindXML
	case dataType == "String", dataType == "TextRef",
		strings.HasPrefix(dataType, "String."), strings.HasPrefix(dataType, "TextRef."):
		return kindString
	}
	return kindAny
}

// describe is the line of the doc comment that tells an attribute's id,
// ApiIdentifier, data type and shape; typeRef names a referenced type
// (refName).
func describe(a Attribute, typeRef func(int64) string) string {
	var b strings.Builder
	b.WriteString("Attribute ")
	b.WriteString(itoa(a.ID))
	b.WriteString(" (")
	dt := a.DataType
	if dt == "" {
		dt = "unknown data type"
	}
	b.WriteString(dt)
	if a.Multiple {
		b.WriteString(", multiple values")
	}
	if a.LanguageDependent {
		b.WriteString(", language-dependent")
	}
	if a.HasUnit {
		b.WriteString(", with unit")
	}
	if refs := refNames(a, typeRef); len(refs) > 0 {
		b.WriteString(", references ")
		b.WriteString(strings.Join(refs, ", "))
	}
	b.WriteString(").")
	return b.String()
}

// refNames are the names of the types a may reference: RefTypes, then
// RefTypeIDs by typeRef.
func refNames(a Attribute, typeRef func(int64) string) []string {
	out := slices.Clone(a.RefTypes)
	for _, id := range a.RefTypeIDs {
		out = append(out, typeRef(id))
	}
	return out
}

// refName returns how a doc comment names the type id: its ApiIdentifier,
// else its generated name (names) when the schema has it, else its id.
func refName(byID map[int64]*Type, names map[int64]string) func(int64) string {
	return func(id int64) string {
		if t, ok := byID[id]; ok {
			if t.APIIdentifier != "" {
				return t.APIIdentifier
			}
			if n, ok := names[id]; ok {
				return n
			}
		}
		return itoa(id)
	}
}

// typeWord is how a doc comment names type t itself: "<id> (<ApiIdentifier>)"
// or "<id> (no ApiIdentifier)".
func typeWord(t *Type) string {
	if t.APIIdentifier == "" {
		return itoa(t.ID) + " (no ApiIdentifier)"
	}
	return itoa(t.ID) + " (" + t.APIIdentifier + ")"
}
