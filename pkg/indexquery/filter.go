package indexquery

import (
	"context"
	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/search"
)

// AttrKey names one attribute value slot.
type AttrKey struct{ Attr, Lang, Variant int64 }

// Compare operators of ValueFilter (NovaDB FilterCompareOperator).
const (
	OpEqual = iota
	OpNotEqual
	OpLessThan
	OpLessThanOrEqual
	OpGreaterThan
	OpGreaterThanOrEqual
	OpWildcard
	OpRef
)

// ValueFilter matches objects by one attribute value (ObjectValueFilter).
type ValueFilter struct {
	AttrKey
	// Value is the invariant string form; nil compares with "no value".
	Value *string
	Op    int
}

// Filter is NovaDB's ObjectFilterCondition.
type Filter struct {
	// Caller is who asks: user objects (content.TypeUser) match only for
	// administrators and the user itself (auth.Principal.ReadsUser). The
	// rule is part of the engine query, so totals, facets and paging stay
	// right. Nil is a trusted internal query without the rule.
	Caller          *auth.Principal
	UILanguage      int64
	HasLocalValues  bool
	HasDisplayName  *bool
	SearchPhrase    *string
	QuickSearchKeys []AttrKey
	TypeIDs         []int64
	ObjectIDs       []int64
	ModifiedBy      *string
	Values          []ValueFilter
	Deleted         *bool
	ModifiedSince   *time.Time
	// QuickSearchFullText matches the search phrase against the full text too.
	QuickSearchFullText bool
	// FullText is a Lucene query on the full text (see ParseLucene).
	FullText *string
}

// query translates f for branch. It may run aggregations (wildcards are
// expanded against the indexed values), hence ctx.
func (s *Service) query(ctx context.Context, branch int64, f Filter) (search.Query, error) {
	q := search.And{search.Term{Field: indexdoc.FieldBranch, Value: branch}}
	if c := f.Caller; c != nil && !c.Admin {
		users := search.And{search.Term{Field: indexdoc.FieldTypeRef, Value: content.TypeUser}}
		if c.UserID != 0 {
			users = append(users, search.Not{Query: search.Term{Field: indexdoc.FieldID, Value: c.UserID}})
		}
		q = append(q, search.Not{Query: users})
	}
	if f.HasLocalValues {
		q = append(q, search.Term{Field: indexdoc.FieldHasLocalValues, Value: true})
	}
	if f.HasDisplayName != nil {
		q = append(q, search.Term{Field: indexdoc.FieldHasDisplayName, Value: *f.HasDisplayName})
	}
	if len(f.TypeIDs) > 0 {
		q = append(q, search.Terms{Field: indexdoc.FieldTypeRef, Values: anys(f.TypeIDs)})
	}
	if len(f.ObjectIDs) > 0 {
		q = append(q, search.Terms{Field: indexdoc.FieldID, Values: anys(f.ObjectIDs)})
	}
	if f.ModifiedBy != nil {
		q = append(q, search.Term{Field: indexdoc.FieldModifiedBy, Value: *f.ModifiedBy})
	}
	if f.Deleted != nil {
		del := search.Term{Field: indexdoc.FieldDeleted, Value: true}
		if *f.Deleted {
			q = append(q, del)
		} else {
			q = append(q, search.Not{Query: del})
		}
	}
	if f.ModifiedSince != nil {
		q = append(q, search.Range{Field: indexdoc.FieldModified, Gte: f.ModifiedSince.UTC()})
	}
	if f.SearchPhrase != nil && strings.TrimSpace(*f.SearchPhrase) != "" {
		pq, err := s.phraseQuery(ctx, f, *f.SearchPhrase)
		if err != nil {
			return nil, err
		}
		q = append(q, pq)
	}
	if f.FullText != nil && strings.TrimSpace(*f.FullText) != "" {
		n, err := parseCapped("filter.fullText", *f.FullText, false)
		if err != nil {
			return nil, err
		}
		fq, err := n.toQuery(ctx, indexdoc.FieldFullText)
		if err != nil {
			return nil, err
		}
		q = append(q, fq)
	}
	for i, vf := range f.Values {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		vq, err := s.valueQuery(ctx, branch, vf)
		if err != nil {
			return nil, invalid("filter.filters[%d]: %v", i, err)
		}
		q = append(q, vq)
	}
	return q, nil
}

// phraseQuery: every word of the phrase must occur in the display name (of
// the UI language), in one of QuickSearchKeys or, with
// QuickSearchFullText, in the full text; a word ending in '*' is a prefix.
// A phrase that is an object id also matches that object. The phrase is
// capped (MaxPhraseBytes, and MaxPhraseTerms for its words times their
// alternatives) before anything is built.
func (s *Service) phraseQuery(ctx context.Context, f Filter, phrase string) (search.Query, error) {
	const name = "filter.searchPhrase"
	if err := checkPhrase(name, phrase); err != nil {
		return nil, err
	}
	lang := uiLang(f.UILanguage)
	nameField := indexdoc.FieldFullText
	if s.hasLang(lang) {
		nameField = indexdoc.NameTextField(lang)
	}
	type piece struct {
		words  []string
		prefix bool
	}
	var pieces []piece
	nWords := 0
	for _, p := range strings.Fields(phrase) {
		words := indexdoc.Words(strings.TrimRight(p, "*"))
		pieces = append(pieces, piece{words, strings.HasSuffix(p, "*")})
		nWords += len(words)
	}
	alternatives := 1 + len(f.QuickSearchKeys)
	if f.QuickSearchFullText && nameField != indexdoc.FieldFullText {
		alternatives++
	}
	if err := checkTerms(name, nWords*alternatives); err != nil {
		return nil, err
	}
	var all search.And
	for _, pc := range pieces {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prefix, words := pc.prefix, pc.words
		for i, w := range words {
			isPrefix := prefix && i == len(words)-1
			var alts search.Or
			textQ := func(field string) search.Query {
				if isPrefix {
					return search.Prefix{Field: field, Value: w}
				}
				return search.Match{Field: field, Text: w}
			}
			alts = append(alts, textQ(nameField))
			if f.QuickSearchFullText && nameField != indexdoc.FieldFullText {
				alts = append(alts, textQ(indexdoc.FieldFullText))
			}
			for _, k := range f.QuickSearchKeys {
				term := indexdoc.Key(k.Attr, k.Lang, k.Variant) + "=" + w
				if isPrefix {
					alts = append(alts, search.Prefix{Field: indexdoc.FieldWords, Value: term})
				} else {
					alts = append(alts, search.Term{Field: indexdoc.FieldWords, Value: term})
				}
			}
			all = append(all, alts)
		}
	}
	if len(all) == 0 {
		return nil, invalid("filter.searchPhrase %q has no words", phrase)
	}
	if id, err := strconv.ParseInt(strings.TrimSpace(phrase), 10, 64); err == nil {
		return search.Or{all, search.Term{Field: indexdoc.FieldID, Value: id}}, nil
	}
	return all, nil
}

// valueQuery translates one ObjectValueFilter.
func (s *Service) valueQuery(ctx context.Context, branch int64, vf ValueFilter) (search.Query, error) {
	key := indexdoc.Key(vf.Attr, vf.Lang, vf.Variant)
	hasKey := search.Term{Field: indexdoc.FieldKeys, Value: key}
	if vf.Value == nil {
		switch vf.Op {
		case OpEqual:
			return search.Not{Query: hasKey}, nil
		case OpNotEqual:
			return hasKey, nil
		}
		return nil, invalid("compareOperator %d needs a value", vf.Op)
	}
	v := *vf.Value
	switch vf.Op {
	case OpEqual:
		return equalQuery(vf.AttrKey, v), nil
	case OpNotEqual:
		return search.Not{Query: equalQuery(vf.AttrKey, v)}, nil
	case OpLessThan, OpLessThanOrEqual, OpGreaterThan, OpGreaterThanOrEqual:
		return rangeQuery(vf.AttrKey, v, vf.Op)
	case OpWildcard:
		return s.wildcardQuery(ctx, branch, vf.AttrKey, v)
	case OpRef:
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, invalid("Ref value %q is not an object id", v)
		}
		if vf.Attr == 0 {
			return search.Term{Field: indexdoc.FieldRefs, Value: id}, nil
		}
		return search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(vf.Attr, vf.Lang, vf.Variant, strconv.FormatInt(id, 10))}, nil
	}
	return nil, invalid("unknown compareOperator %d (want 0..7)", vf.Op)
}

// equalQuery: strings compare case-insensitively, numbers by value
// ("19.50" = 19.5), booleans ignoring case, dates by instant.
func equalQuery(k AttrKey, v string) search.Query {
	alts := search.Or{
		search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(k.Attr, k.Lang, k.Variant, v)},
		search.Term{Field: indexdoc.FieldValuesLower, Value: strings.ToLower(indexdoc.ValueTerm(k.Attr, k.Lang, k.Variant, v))},
	}
	if b, err := strconv.ParseBool(strings.ToLower(v)); err == nil {
		alts = append(alts, search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(k.Attr, k.Lang, k.Variant, strconv.FormatBool(b))})
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		alts = append(alts, search.Term{Field: indexdoc.FieldOrdered, Value: indexdoc.OrderedTerm('n', k.Attr, k.Lang, k.Variant, indexdoc.EncodeNumber(f))})
		if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			alts = append(alts, search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(k.Attr, k.Lang, k.Variant, strconv.FormatInt(i, 10))})
		}
	}
	if t, ok := indexdoc.ParseDate(strings.TrimSpace(v)); ok {
		alts = append(alts, search.Term{Field: indexdoc.FieldOrdered, Value: indexdoc.OrderedTerm('d', k.Attr, k.Lang, k.Variant, indexdoc.EncodeDate(t))})
	}
	return alts
}

// rangeQuery compares numbers (when v is a number), dates (when v is a
// date) or else strings (case-insensitive, byte order).
func rangeQuery(k AttrKey, v string, op int) (search.Query, error) {
	v = strings.TrimSpace(v)
	var kinds []struct {
		field  string
		lo, hi string
		bound  string
	}
	add := func(field, lo, hi, bound string) {
		kinds = append(kinds, struct {
			field  string
			lo, hi string
			bound  string
		}{field, lo, hi, bound})
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		lo, hi := indexdoc.OrderedBounds('n', k.Attr, k.Lang, k.Variant)
		add(indexdoc.FieldOrdered, lo, hi, indexdoc.OrderedTerm('n', k.Attr, k.Lang, k.Variant, indexdoc.EncodeNumber(f)))
	}
	if t, ok := indexdoc.ParseDate(v); ok {
		lo, hi := indexdoc.OrderedBounds('d', k.Attr, k.Lang, k.Variant)
		add(indexdoc.FieldOrdered, lo, hi, indexdoc.OrderedTerm('d', k.Attr, k.Lang, k.Variant, indexdoc.EncodeDate(t)))
	}
	if len(kinds) == 0 {
		p := indexdoc.Key(k.Attr, k.Lang, k.Variant)
		add(indexdoc.FieldValuesLower, p+"=", p+">", strings.ToLower(indexdoc.ValueTerm(k.Attr, k.Lang, k.Variant, v)))
	}
	var alts search.Or
	for _, c := range kinds {
		r := search.Range{Field: c.field}
		switch op {
		case OpLessThan:
			r.Gte, r.Lt = c.lo, c.bound
		case OpLessThanOrEqual:
			r.Gte, r.Lte = c.lo, c.bound
		case OpGreaterThan:
			r.Gt, r.Lt = c.bound, c.hi
		case OpGreaterThanOrEqual:
			r.Gte, r.Lt = c.bound, c.hi
		}
		alts = append(alts, r)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return alts, nil
}

func anys(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// displayName of a hit in lang: the language's own field, else the
// "<lang>=" entry of FieldName, else English, else any, else "Object {id}".
func displayName(fields map[string]any, lang, id int64) (string, bool) {
	if v, ok := fields[indexdoc.NameField(lang)].(string); ok {
		return v, true
	}
	names := strs(fields[indexdoc.FieldName])
	for _, want := range []string{strconv.FormatInt(lang, 10) + "=", strconv.FormatInt(content.LanguageEnUS, 10) + "=", ""} {
		for _, n := range names {
			if strings.HasPrefix(n, want) {
				if _, name, ok := strings.Cut(n, "="); ok {
					return name, true
				}
			}
		}
	}
	return "Object " + strconv.FormatInt(id, 10), false
}

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
