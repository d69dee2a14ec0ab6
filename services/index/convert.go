package index

import (
	"context"
	"github.com/cmsplatform/cms/pkg/auth"
	"strconv"

	"github.com/cmsplatform/cms/pkg/indexquery"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func freshness(minVersion *int64, wait *string) indexquery.Freshness {
	f := indexquery.Freshness{MinVersion: minVersion}
	if wait != nil {
		f.MaxWait = *wait
	}
	return f
}

func page(p *indexv1.Page) indexquery.Page {
	return indexquery.Page{Skip: int(p.GetSkip()), Take: int(p.GetTake())}
}

func ids64(in []int32) []int64 {
	if in == nil {
		return nil
	}
	out := make([]int64, len(in))
	for i, v := range in {
		out[i] = int64(v)
	}
	return out
}

// filterFor is the filter of a request by the caller in ctx (the domain
// hides user objects from callers who are no administrators).
func filterFor(ctx context.Context, f *indexv1.ObjectFilterCondition) indexquery.Filter {
	out := filter(f)
	p, _ := auth.FromContext(ctx)
	out.Caller = &p
	return out
}

func filter(f *indexv1.ObjectFilterCondition) indexquery.Filter {
	if f == nil {
		return indexquery.Filter{}
	}
	out := indexquery.Filter{
		UILanguage: int64(f.GetUiLanguage()), HasLocalValues: f.GetHasLocalValues(), HasDisplayName: f.HasDisplayName,
		SearchPhrase: f.SearchPhrase, TypeIDs: ids64(f.GetObjectTypeIds()), ObjectIDs: ids64(f.GetObjectIds()),
		ModifiedBy: f.ModifiedBy, Deleted: f.Deleted, QuickSearchFullText: f.GetQuickSearchFullText(), FullText: f.FullText,
	}
	for _, k := range f.GetQuickSearchAttributes() {
		out.QuickSearchKeys = append(out.QuickSearchKeys, indexquery.AttrKey{Attr: int64(k.GetAttrId()), Lang: int64(k.GetLangId()), Variant: int64(k.GetVariantId())})
	}
	for _, v := range f.GetFilters() {
		out.Values = append(out.Values, indexquery.ValueFilter{
			AttrKey: indexquery.AttrKey{Attr: int64(v.GetAttrId()), Lang: int64(v.GetLangId()), Variant: int64(v.GetVariantId())},
			Value:   v.Value, Op: int(v.GetCompareOperator())})
	}
	if f.ModifiedSince != nil {
		t := f.ModifiedSince.AsTime()
		out.ModifiedSince = &t
	}
	return out
}

func sorts(in []*indexv1.ObjectSortBy) []indexquery.SortBy {
	var out []indexquery.SortBy
	for _, s := range in {
		out = append(out, indexquery.SortBy{Kind: int(s.GetSortBy()), Reverse: s.GetReverse(),
			AttrKey: indexquery.AttrKey{Attr: int64(s.GetAttrId()), Lang: int64(s.GetLangId()), Variant: int64(s.GetVariantId())}})
	}
	return out
}

func item(it indexquery.Item) *indexv1.ObjectItem {
	out := &indexv1.ObjectItem{Id: int32(it.ID), TypeRef: int32(it.TypeRef), DisplayName: &it.DisplayName,
		Deleted: it.Deleted, HasDisplayName: it.HasDisplayName}
	if it.ModifiedBy != "" {
		out.ModifiedBy = &it.ModifiedBy
	}
	if !it.Modified.IsZero() {
		out.Modified = timestamppb.New(it.Modified)
	}
	return out
}

func occurrences(o *indexquery.Occurrences) *indexv1.Occurrences {
	if o == nil {
		return nil
	}
	out := &indexv1.Occurrences{NullOccurrences: int32(o.Null), NotNullOccurrences: int32(o.NotNull), ValueType: o.ValueType,
		More: o.More, ValueOccurrences: []*indexv1.Occurrence{}}
	for _, v := range o.Values {
		var val *structpb.Value
		switch x := v.Value.(type) {
		case int64:
			val = structpb.NewNumberValue(float64(x))
		case bool:
			val = structpb.NewBoolValue(x)
		case string:
			val = structpb.NewStringValue(x)
		default:
			val = structpb.NewNullValue()
		}
		out.ValueOccurrences = append(out.ValueOccurrences, &indexv1.Occurrence{Value: val, Count: int32(v.Count)})
	}
	return out
}

// float32ToDecimal widens f by its shortest decimal form (0.7f → 0.7).
func float32ToDecimal(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}
