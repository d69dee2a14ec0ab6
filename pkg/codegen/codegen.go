// Package codegen generates typed models of the content types of a branch:
// C# classes that fit the Management values and TypeScript types that
// describe exactly what Delivery returns for a type. docs/codegen.md holds
// the mapping table and the naming rules; this package is their one place.
//
// Generation is split in two: Load (load.go) reads the types and their
// attributes from the content domain, Generate turns that schema into the
// source text of one language. Generate is pure and deterministic: the
// same schema always gives the same bytes.
package codegen

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// Sentinel errors (besides those of pkg/content, passed through).
var (
	// ErrInvalid: an unsupported language, too many identifiers, a type
	// without an ApiIdentifier or an identifier that names no type.
	ErrInvalid = errkind.New(errkind.Invalid, "invalid request")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Language is a target language.
type Language string

// The languages. CSharp is the default (NovaDB's only documented one).
const (
	CSharp     Language = "csharp"
	TypeScript Language = "typescript"
)

// Languages lists the supported languages in the order documented.
var Languages = []Language{CSharp, TypeScript}

// ParseLanguage reads the {language} path parameter, without case; "" is
// the default (csharp). Any other name is ErrInvalid (400) listing the
// supported ones.
func ParseLanguage(s string) (Language, error) {
	if s == "" {
		return CSharp, nil
	}
	for _, l := range Languages {
		if strings.EqualFold(s, string(l)) {
			return l, nil
		}
	}
	names := make([]string, len(Languages))
	for i, l := range Languages {
		names[i] = string(l)
	}
	return "", invalidf("language %q is not supported (supported: %s)", errkind.Clip(s, 64), strings.Join(names, ", "))
}

// Type is an object type as the generator sees it.
type Type struct {
	ID            int64
	APIIdentifier string // "" = none: the class is named from Name
	Name          string // display name (attribute 1000), "" = none
	Description   string // attribute 1012, "" = none
	// Attributes are the type's attributes that have an ApiIdentifier
	// (load.go says which), in id order.
	Attributes []Attribute
}

// Attribute is an attribute definition (an object of type 10).
type Attribute struct {
	ID            int64
	APIIdentifier string
	Name          string
	Description   string
	// DataType is the value of attribute 1001 ("" = unknown: any scalar).
	DataType          string
	Multiple          bool // 1004
	LanguageDependent bool // 1017
	// HasUnit: the attribute names a unit (1003), so Delivery renders its
	// values as {"value", "unitRef"} when asked for units.
	HasUnit bool
	// RefTypes name types a reference may point to, as given, for the doc
	// comment; RefTypeIDs are the ids of those types (1015), written there
	// by ApiIdentifier, by the generated name for a type of the schema
	// without one (the same name its class has), else by id.
	RefTypes   []string
	RefTypeIDs []int64
}

// Schema is what one answer is generated from.
type Schema struct {
	// Branch is the branch the types were read on (for the header).
	Branch int64
	// Named holds every type that takes part in naming, in id order: all
	// types of the branch that are not deleted (with or without an
	// ApiIdentifier), so a type's name does not depend on which other
	// types one answer holds.
	Named []Type
	// Emit are the ids of the types to generate, in output order; each is
	// in Named.
	Emit []int64
}

// Generate returns the source text of s in lang.
func Generate(lang Language, s Schema) (string, error) {
	byID := make(map[int64]*Type, len(s.Named))
	for i := range s.Named {
		byID[s.Named[i].ID] = &s.Named[i]
	}
	emit := make([]*Type, 0, len(s.Emit))
	done := map[int64]bool{}
	for _, id := range s.Emit {
		if done[id] {
			continue
		}
		done[id] = true
		t, ok := byID[id]
		if !ok {
			return "", fmt.Errorf("codegen: type %d is not in the schema", id)
		}
		emit = append(emit, clean(t))
	}
	switch lang {
	case CSharp:
		return csharp(s, emit, byID), nil
	case TypeScript:
		return typescript(s, emit, byID), nil
	}
	_, err := ParseLanguage(string(lang))
	return "", err
}

// clean returns t with its attributes in id order, those without an
// ApiIdentifier dropped and, of two with the same ApiIdentifier, only the
// first kept (Delivery keys props by it); ids are unique.
func clean(t *Type) *Type {
	c := *t
	as := slices.Clone(t.Attributes)
	slices.SortStableFunc(as, func(a, b Attribute) int { return cmp.Compare(a.ID, b.ID) })
	seen, ids := map[string]bool{}, map[int64]bool{}
	c.Attributes = as[:0]
	for _, a := range as {
		if a.APIIdentifier == "" || seen[a.APIIdentifier] || ids[a.ID] {
			continue
		}
		seen[a.APIIdentifier], ids[a.ID] = true, true
		c.Attributes = append(c.Attributes, a)
	}
	return &c
}
