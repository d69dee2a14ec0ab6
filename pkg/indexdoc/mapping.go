// Package indexdoc is the schema of the search documents pkg/indexwriter
// writes and pkg/delivery, pkg/indexquery and the services read: index
// names, field names and their encodings, the stored object source, sort
// keys, display-name fields and comment documents. Writer and readers
// import it, so both sides agree on the encoding; it does no I/O.
//
// One objects index for all branches (ObjectsIndex, plus the writer's index prefix
// and the engine's own prefix), documents keyed DocID(branch, object) with a
// FieldBranch field, rather than one index per branch: branches (work
// packages) come and go by the hundred and Elasticsearch pays per index, and
// cross-branch questions (work item occurrences) become one aggregation. A
// search always filters on FieldBranch; an unknown branch matches nothing.
//
// The mapping is fixed (search.Mapping is immutable), while attributes and
// languages are data. Attribute values therefore go into a few generic
// multi-valued keyword fields whose entries carry their (attribute, language,
// variant) key: FieldValues "<attr>:<lang>:<variant>=<value>" (equality,
// references), FieldValuesLower (case-insensitive equality and prefixes),
// FieldOrdered (numbers and dates in an order-preserving encoding, for range
// filters), FieldWords (tokens, for quick search in given attributes),
// FieldKeys (which keys have values), FieldRefs (the referenced ids) and
// FieldFullText (OBJECT_FULL_TEXT). Display names get real per-language
// fields (exact, sortable, analysed) for the languages in the indexer's
// display-name languages (DefaultLanguages), holding the name shown in the
// language: its own, else along its fallback chain (pkg/indexwriter); readers
// must build queries with the helpers of this package so that both sides
// agree on the encoding.
package indexdoc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/search"
)

// Index names (before Options.IndexPrefix and the engine's own prefix).
const (
	// ObjectsIndex holds one document per (branch, visible object),
	// soft-deleted objects included (FieldDeleted).
	ObjectsIndex = "objects"
	// StateIndex holds the indexer's bookkeeping: the document VersionDocID.
	StateIndex = "indexer-state"
	// VersionDocID is the state document whose external version is the
	// applied change-tracking version.
	VersionDocID = "changeTrackingVersion"
)

// Field names of an object document. Multi-valued fields are arrays; a
// field without values is absent. See the package comment for the encoding
// of the keyword fields that carry attribute values.
const (
	FieldBranch          = "branch"          // long: the branch the document is for
	FieldID              = "id"              // long: the object id
	FieldTypeRef         = "typeRef"         // long
	FieldGUID            = "guid"            // keyword
	FieldAPIIdentifier   = "apiIdentifier"   // keyword
	FieldDeleted         = "deleted"         // bool: soft-deleted on the branch (readers exclude it unless asked)
	FieldModified        = "modified"        // date: time of LastTransaction
	FieldModifiedBy      = "modifiedBy"      // keyword: user of LastTransaction
	FieldLastTransaction = "lastTransaction" // long: as CmsObjectMetadata.lastTransaction
	FieldHasLocalValues  = "hasLocalValues"  // bool: object row or a value row stored on the branch
	FieldHasDisplayName  = "hasDisplayName"  // bool: some display-name value (any language; displayname.go)
	FieldName            = "name"            // keyword: "<lang>=<display name>" per language
	FieldKeys            = "keys"            // keyword: "<attr>:<lang>:<variant>" of every value
	FieldValues          = "values"          // keyword: ValueTerm per scalar value (truncated)
	FieldValuesLower     = "valuesLower"     // keyword: lower-cased FieldValues of string values
	FieldOrdered         = "ordered"         // keyword: OrderedTerm per number and date value
	FieldWords           = "words"           // keyword: "<attr>:<lang>:<variant>=<lower-case token>"
	FieldRefs            = "refs"            // long: targets of object references (ObjRef, BinRef)
	FieldFullText        = "fullText"        // text: every string, XHTML text and display name (OBJECT_FULL_TEXT)
	FieldXMLLinks        = "xmlLinks"        // long: object ids linked from XmlRef values (XMLLinks)
)

// Per-language display-name fields, for the languages in Options.Languages:
// exact (filter), lower-cased (sort) and analysed (search phrase). Each
// holds the display name (model.DisplayName, variant 0) the language's
// fallback chain selects: its own, else its fallback languages', else the
// language-independent one (displayname.go, fallback.go); FieldName has
// the own names.

// NameField is the exact display-name field of lang.
func NameField(lang int64) string { return "name_" + strconv.FormatInt(lang, 10) }

// NameSortField is the lower-cased display-name field of lang.
func NameSortField(lang int64) string { return "nameSort_" + strconv.FormatInt(lang, 10) }

// NameTextField is the analysed display-name field of lang.
func NameTextField(lang int64) string { return "nameText_" + strconv.FormatInt(lang, 10) }

// MaxTermBytes caps values stored in keyword fields (Lucene refuses terms
// over 32766 bytes). Longer values are cut on a rune boundary, so equality
// filters on them compare the first MaxTermBytes bytes only.
const MaxTermBytes = 512

// Mapping returns the objects index mapping for the given display-name
// languages. Readers must use the same languages as the indexer: the
// mapping is immutable, a different list needs a new index (and reindex).
func Mapping(languages []int64) search.Mapping {
	f := map[string]search.Kind{
		FieldBranch: search.Long, FieldID: search.Long, FieldTypeRef: search.Long,
		FieldGUID: search.Keyword, FieldAPIIdentifier: search.Keyword, FieldDeleted: search.Bool,
		FieldModified: search.Date, FieldModifiedBy: search.Keyword, FieldLastTransaction: search.Long,
		FieldHasLocalValues: search.Bool, FieldHasDisplayName: search.Bool, FieldName: search.Keyword,
		FieldKeys: search.Keyword, FieldValues: search.Keyword, FieldValuesLower: search.Keyword,
		FieldOrdered: search.Keyword, FieldWords: search.Keyword, FieldRefs: search.Long,
		FieldFullText: search.Text, FieldSource: search.Stored, FieldXMLLinks: search.Long,
	}
	for _, l := range languages {
		f[NameField(l)] = search.Keyword
		f[NameSortField(l)] = search.Keyword
		f[NameTextField(l)] = search.Text
	}
	// SortKeyField fields (sortkeys.go). Changing the mapping asks for
	// `cms reindex` of existing indexes (ErrMappingConflict).
	return search.Mapping{Fields: f, KeywordPrefixes: []string{SortKeyPrefix}}
}

// StateMapping is the mapping of StateIndex.
func StateMapping() search.Mapping {
	return search.Mapping{Fields: map[string]search.Kind{"version": search.Long}}
}

// DocID is the id of the document of object id on branch.
func DocID(branch, id int64) string {
	var b [40]byte
	return string(strconv.AppendInt(append(strconv.AppendInt(b[:0], branch, 10), '-'), id, 10))
}

// Key is the "<attr>:<lang>:<variant>" prefix shared by the value fields.
func Key(attr, lang, variant int64) string {
	return strconv.FormatInt(attr, 10) + ":" + strconv.FormatInt(lang, 10) + ":" + strconv.FormatInt(variant, 10)
}

// ValueTerm is the FieldValues (and, lower-cased, FieldValuesLower) entry of
// one value: Key + "=" + the value in invariant form: strings as is,
// numbers in the shortest decimal form ("19.5", "3000020"), booleans
// "true"/"false", references the target id. An Index ObjectValueFilter
// with Equal/NotEqual/Ref is a Term on this (lower-case the bool string a
// .NET client sends as "True").
func ValueTerm(attr, lang, variant int64, value string) string {
	return Truncate(Key(attr, lang, variant) + "=" + value)
}

// OrderedTerm is the FieldOrdered entry of a number ("n") or date ("d")
// value: Key + "=" + an encoding whose byte order is the value order, so
// LessThan/GreaterThan filters are keyword ranges bounded by
// OrderedBounds.
func OrderedTerm(kind byte, attr, lang, variant int64, enc string) string {
	return string(kind) + ":" + Key(attr, lang, variant) + "=" + enc
}

// OrderedBounds returns the exclusive range (lo, hi) that contains exactly
// the FieldOrdered entries of one attribute key and kind: combine them with
// a bound from OrderedTerm (Gt lo / Lt hi for the open side).
func OrderedBounds(kind byte, attr, lang, variant int64) (lo, hi string) {
	p := string(kind) + ":" + Key(attr, lang, variant)
	return p + "=", p + ">" // '>' is the byte after '='
}

// EncodeNumber renders f as 16 hex digits whose byte order is numeric order.
func EncodeNumber(f float64) string {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return fmt.Sprintf("%016x", b)
}

// EncodeDate renders t in UTC with fixed width (7 fractional digits), so
// byte order is time order.
func EncodeDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000Z") }

// ParseDate reads a DateTime ("o"/RFC 3339) or DateTime.Date value.
func ParseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Words splits s into lower-case tokens (runs of letters and digits), the
// unit of FieldWords: a quick search for a phrase is a Term (or Prefix, for
// "abc*") per token on Key + "=" + token.
func Words(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w = Truncate(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Truncate cuts s to at most MaxTermBytes bytes on a rune boundary: the
// form of every keyword term.
func Truncate(s string) string {
	if len(s) <= MaxTermBytes {
		return s
	}
	s = s[:MaxTermBytes]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// NameKey is the key of the display name shown in lang (one of
// Options.Languages) in FieldWords ("<NameKey>=<word>") and
// FieldValuesLower ("<NameKey>=<lower-cased name>"), beside the
// "<attr>:<lang>:<variant>" keys of attribute values (Key).
func NameKey(lang int64) string { return "name:" + strconv.FormatInt(lang, 10) }

// IsNameKey reports whether key (before "=" in FieldWords or
// FieldValuesLower) is a NameKey.
func IsNameKey(key string) bool { return strings.HasPrefix(key, "name:") }

// DefaultLanguages are the display-name languages with their own fields:
// the bootstrapped en-US (201) and de-DE (202).
var DefaultLanguages = []int64{201, 202}
