package model

import "strings"

// IsReference reports whether values of data type dt (attribute 1001) are
// references to other objects, whose value is the target's id: ObjRef and
// the BinRef family.
func IsReference(dt string) bool { return dt == "ObjRef" || strings.HasPrefix(dt, "BinRef") }

// IsMarkup reports whether values of data type dt are XHTML fragments
// (XmlRef.*), indexed by their text.
func IsMarkup(dt string) bool { return strings.HasPrefix(dt, "XmlRef") }

// IsNumeric reports whether values of data type dt are numbers (references
// included: they compare by target id).
func IsNumeric(dt string) bool {
	return dt == "Integer" || dt == "Decimal" || dt == "Float" || IsReference(dt)
}
