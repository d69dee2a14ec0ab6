package delivery

import (
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/query"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
)

// filterQuery translates the filter parameter of Occurrences and
// Suggestions, which accept only conditions joined with &&: a || is
// refused naming its position.
func (sc *scope) filterQuery(expr string, deleted bool) (search.Query, error) {
	return sc.translateFilter(expr, deleted, false)
}

// listFilterQuery translates the filter parameter of List and Count
// (typed or not), whose conditions may be joined with && and ||.
func (sc *scope) listFilterQuery(expr string, deleted bool) (search.Query, error) {
	return sc.translateFilter(expr, deleted, true)
}

// translateFilter translates a filter into a query over the scope: the
// alternatives become a search.Or of search.Ands. An attribute condition
// holds when any (language, variant) of the request's chains satisfies
// it.
func (sc *scope) translateFilter(expr string, deleted, allowOr bool) (search.Query, error) {
	f, err := query.ParseFilter(expr)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	if pos, ok := f.HasOr(); ok && !allowOr {
		return nil, invalidf("filter: || is not allowed here (at position %d): occurrences and suggestions accept only conditions joined with &&", pos+1)
	}
	q := sc.baseQuery(deleted)
	alts := make(search.Or, 0, len(f.Or))
	for _, conj := range f.Or {
		and := make(search.And, 0, len(conj.Conds))
		for _, c := range conj.Conds {
			var cq search.Query
			if c.Meta {
				cq, err = sc.metaCond(c)
			} else {
				cq, err = sc.attrCond(c)
			}
			if err != nil {
				return nil, err
			}
			and = append(and, cq)
		}
		alts = append(alts, and)
	}
	switch len(alts) {
	case 0:
	case 1:
		q = append(q, alts[0].(search.And)...)
	default:
		q = append(q, alts)
	}
	return q, nil
}

// metaFields maps meta.<name> to index fields.
var metaFields = map[string]string{
	"id": indexdoc.FieldID, "guid": indexdoc.FieldGUID, "apiidentifier": indexdoc.FieldAPIIdentifier,
	"typeref": indexdoc.FieldTypeRef, "lasttransaction": indexdoc.FieldLastTransaction,
	"lastmodified": indexdoc.FieldModified, "modified": indexdoc.FieldModified, "deleted": indexdoc.FieldDeleted,
}

func (sc *scope) metaCond(c query.Cond) (search.Query, error) {
	name := strings.ToLower(c.Field)
	var value any = c.Value
	field := metaFields[name]
	switch name {
	case "type":
		t, err := sc.m.objType(c.Value)
		if err != nil {
			return search.Or{}, nil // an unknown type matches nothing
		}
		field, value = indexdoc.FieldTypeRef, t.id
	case "id", "typeref", "lasttransaction":
		n, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil {
			return nil, invalidf("filter at %d: meta.%s needs an integer, got %q", c.Pos+1, c.Field, c.Value)
		}
		value = n
	case "deleted":
		b, err := strconv.ParseBool(strings.ToLower(c.Value))
		if err != nil {
			return nil, invalidf("filter at %d: meta.deleted needs true or false", c.Pos+1)
		}
		value = b
	case "lastmodified", "modified":
		t, ok := indexdoc.ParseDate(c.Value)
		if !ok {
			return nil, invalidf("filter at %d: meta.%s needs a date", c.Pos+1, c.Field)
		}
		value = t
	case "guid", "apiidentifier":
	default:
		return nil, invalidf("filter at %d: unknown metadata field meta.%s", c.Pos+1, c.Field)
	}
	switch c.Op {
	case query.OpEq, query.OpContains:
		return search.Term{Field: field, Value: value}, nil
	case query.OpNotEq:
		return search.Not{Query: search.Term{Field: field, Value: value}}, nil
	}
	if name == "deleted" {
		return nil, invalidf("filter at %d: %s on meta.deleted", c.Pos+1, c.Op)
	}
	r := search.Range{Field: field}
	switch c.Op {
	case query.OpLess:
		r.Lt = value
	case query.OpLessEq:
		r.Lte = value
	case query.OpGreater:
		r.Gt = value
	case query.OpGreatEq:
		r.Gte = value
	}
	return r, nil
}

func (sc *scope) attrCond(c query.Cond) (search.Query, error) {
	var a *attribute
	if strings.EqualFold(c.Field, "displayName") {
		a = sc.m.attrs[content.AttrName]
		if sc.typ != nil && sc.typ.nameAttr != 0 && sc.m.attrs[sc.typ.nameAttr] != nil {
			a = sc.m.attrs[sc.typ.nameAttr]
		}
	} else {
		a = sc.m.attribute(c.Field)
	}
	if a == nil {
		return nil, invalidf("filter at %d: unknown attribute %q", c.Pos+1, c.Field)
	}
	var keys [][3]int64
	for _, v := range sc.view.variants {
		for _, l := range sc.view.langs {
			keys = append(keys, [3]int64{a.id, l, v})
		}
	}
	anyKey := func(fn func(k [3]int64) search.Query) search.Query {
		or := make(search.Or, 0, len(keys))
		for _, k := range keys {
			or = append(or, fn(k))
		}
		return or
	}
	dt := a.dataType
	switch c.Op {
	case query.OpContains:
		words := indexdoc.Words(c.Value)
		if len(words) == 0 {
			return nil, invalidf("filter at %d: nothing to match in %q", c.Pos+1, c.Value)
		}
		and := search.And{}
		for _, w := range words {
			and = append(and, anyKey(func(k [3]int64) search.Query {
				return search.Term{Field: indexdoc.FieldWords, Value: indexdoc.Key(k[0], k[1], k[2]) + "=" + w}
			}))
		}
		return and, nil
	case query.OpEq, query.OpNotEq:
		term, err := equalityTerm(dt, c)
		if err != nil {
			return nil, err
		}
		q := anyKey(func(k [3]int64) search.Query {
			return search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(k[0], k[1], k[2], term)}
		})
		if c.Op == query.OpNotEq {
			return search.Not{Query: q}, nil
		}
		return q, nil
	}
	kind, enc, err := orderedValue(dt, c)
	if err != nil {
		return nil, err
	}
	return anyKey(func(k [3]int64) search.Query {
		lo, hi := indexdoc.OrderedBounds(kind, k[0], k[1], k[2])
		t := indexdoc.OrderedTerm(kind, k[0], k[1], k[2], enc)
		switch c.Op {
		case query.OpLess:
			return search.Range{Field: indexdoc.FieldOrdered, Gt: lo, Lt: t}
		case query.OpLessEq:
			return search.Range{Field: indexdoc.FieldOrdered, Gt: lo, Lte: t}
		case query.OpGreater:
			return search.Range{Field: indexdoc.FieldOrdered, Gt: t, Lt: hi}
		}
		return search.Range{Field: indexdoc.FieldOrdered, Gte: t, Lt: hi}
	}), nil
}

// equalityTerm renders a filter value as the indexer's invariant form.
func equalityTerm(dt string, c query.Cond) (string, error) {
	switch {
	case model.IsNumeric(dt):
		f, err := strconv.ParseFloat(strings.TrimSpace(c.Value), 64)
		if err != nil {
			return "", invalidf("filter at %d: %s needs a number, got %q", c.Pos+1, c.Field, c.Value)
		}
		if f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case dt == "Boolean":
		b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(c.Value)))
		if err != nil {
			return "", invalidf("filter at %d: %s needs true or false", c.Pos+1, c.Field)
		}
		return strconv.FormatBool(b), nil
	case model.IsMarkup(dt):
		return "", invalidf("filter at %d: %s is markup: use %s:\"words\"", c.Pos+1, c.Field, c.Field)
	}
	return c.Value, nil
}

// orderedValue encodes a comparison value of a number or date attribute.
func orderedValue(dt string, c query.Cond) (byte, string, error) {
	switch dt {
	case "Integer", "Decimal", "Float":
		f, err := strconv.ParseFloat(strings.TrimSpace(c.Value), 64)
		if err != nil {
			return 0, "", invalidf("filter at %d: %s needs a number, got %q", c.Pos+1, c.Field, c.Value)
		}
		return 'n', indexdoc.EncodeNumber(f), nil
	case "DateTime", "DateTime.Date":
		t, ok := indexdoc.ParseDate(strings.TrimSpace(c.Value))
		if !ok {
			return 0, "", invalidf("filter at %d: %s needs a date, got %q", c.Pos+1, c.Field, c.Value)
		}
		return 'd', indexdoc.EncodeDate(t.In(time.UTC)), nil
	}
	return 0, "", invalidf("filter at %d: %s %s: only numbers and dates can be compared", c.Pos+1, c.Field, c.Op)
}
