package delivery

import (
	"context"
	"strconv"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/params"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Occurrences implements Delivery_Occurrences.
func (s *service) Occurrences(ctx context.Context, in *deliveryv1.OccurrencesRequest) (*deliveryv1.OccurrencesResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	take, err := sentFacetTake(in.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return serve(ctx, s, "Occurrences", in, func(ctx context.Context) (*deliveryv1.OccurrencesResult, []string, error) {
		return s.occurrences(ctx, r, in.Fields, take)
	})
}

// OccurrencesTyped implements Delivery_OccurrencesTyped.
func (s *service) OccurrencesTyped(ctx context.Context, in *deliveryv1.OccurrencesTypedRequest) (*deliveryv1.OccurrencesResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	take, err := sentFacetTake(in.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return serve(ctx, s, "OccurrencesTyped", in, func(ctx context.Context) (*deliveryv1.OccurrencesResult, []string, error) {
		return s.occurrences(ctx, r, in.Fields, take)
	})
}

func (s *service) occurrences(ctx context.Context, r delivery.Request, fields string, take int32) (*deliveryv1.OccurrencesResult, []string, error) {
	occ, err := s.dom.Occurrences(ctx, r, fields, take)
	if err != nil {
		return nil, nil, err
	}
	out := &deliveryv1.OccurrencesResult{Occurrences: map[string]*deliveryv1.FieldOccurrences{}}
	for name, o := range occ {
		f := &deliveryv1.FieldOccurrences{NullOccurrences: int32(o.Null), NotNullOccurrences: int32(o.NotNull),
			ValueType: o.ValueType, More: o.More}
		for _, v := range o.Values {
			pv, err := structpb.NewValue(v.Value)
			if err != nil {
				return nil, nil, err
			}
			f.ValueOccurrences = append(f.ValueOccurrences, &deliveryv1.ValueOccurrence{Value: pv, Count: int32(v.Count)})
		}
		out.Occurrences[name] = f
	}
	tags, err := s.dom.QueryTags(ctx, r)
	return out, tags, err
}

// Suggestions implements Delivery_Suggestions.
func (s *service) Suggestions(ctx context.Context, in *deliveryv1.SuggestionsRequest) (*deliveryv1.SuggestionsResult, error) {
	r := delivery.Request{Branch: in.Branch, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	take, err := sentFacetTake(in.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	o := suggestOptions(in.Pattern, in.Fields, &take, in.SortByValue, in.Analyze, in.Fuzzy, in.FuzzyMinSimilarity, in.FuzzyPrefixLength)
	return serve(ctx, s, "Suggestions", in, func(ctx context.Context) (*deliveryv1.SuggestionsResult, []string, error) {
		return s.suggestions(ctx, r, o)
	})
}

// SuggestionsTyped implements Delivery_SuggestionsTyped.
func (s *service) SuggestionsTyped(ctx context.Context, in *deliveryv1.SuggestionsTypedRequest) (*deliveryv1.SuggestionsResult, error) {
	r := delivery.Request{Branch: in.Branch, Type: in.Type, Lang: in.Lang, Variants: in.Variants, Filter: in.Filter, Deleted: in.GetDeleted()}
	if r.Type == "" {
		return nil, s.toStatus(ctx, delivery.ErrNotFound)
	}
	take, err := sentFacetTake(in.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	o := suggestOptions(in.Pattern, in.Fields, &take, in.SortByValue, in.Analyze, in.Fuzzy, in.FuzzyMinSimilarity, in.FuzzyPrefixLength)
	return serve(ctx, s, "SuggestionsTyped", in, func(ctx context.Context) (*deliveryv1.SuggestionsResult, []string, error) {
		return s.suggestions(ctx, r, o)
	})
}

// sentFacetTake reads the take of occurrences and suggestions as sent:
// absent is the default, a sent 0 is refused like any value outside
// 1..MaxFacetTake.
func sentFacetTake(take *int32) (int32, error) {
	n, err := params.Take("take", take, delivery.DefaultFacetTake, delivery.MaxFacetTake)
	return int32(n), err
}

// suggestOptions maps the parameters both suggestion requests share
// (nil = not sent).
func suggestOptions(pattern, fields string, take *int32, sortByValue, analyze, fuzzy *bool, minSim *float32, prefixLen *int32) delivery.SuggestOptions {
	o := delivery.SuggestOptions{Pattern: pattern, Fields: fields, Analyze: analyze}
	if take != nil {
		o.Take = *take
	}
	o.SortByValue = sortByValue != nil && *sortByValue
	o.Fuzzy = fuzzy != nil && *fuzzy
	if minSim != nil {
		// The proto field is a float; its nearest float64 keeps e.g. 0.7
		// from becoming 0.69999998807907104.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(*minSim), 'g', -1, 32), 64)
		o.FuzzyMinSimilarity = &v
	}
	if prefixLen != nil {
		o.FuzzyPrefixLength = int(*prefixLen)
	}
	return o
}

func (s *service) suggestions(ctx context.Context, r delivery.Request, o delivery.SuggestOptions) (*deliveryv1.SuggestionsResult, []string, error) {
	sug, err := s.dom.Suggestions(ctx, r, o)
	if err != nil {
		return nil, nil, err
	}
	out := &deliveryv1.SuggestionsResult{Suggestions: make([]*deliveryv1.Suggestion, 0, len(sug))}
	for _, x := range sug {
		out.Suggestions = append(out.Suggestions, &deliveryv1.Suggestion{Value: x.Value, Count: int32(x.Count), Length: int32(x.Length)})
	}
	tags, err := s.dom.QueryTags(ctx, r)
	return out, tags, err
}
