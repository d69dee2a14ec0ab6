package delivery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// FuzzRequests sends arbitrary filter, sort, language, variants and
// resolve parameters to List, Count, Get, Occurrences and Suggestions on
// a real site (Bleve): every answer is a result or a client error
// (invalid argument, not found, ambiguous), never an internal error or a
// panic, so the transport never turns bad input into a 500.
func FuzzRequests(f *testing.F) {
	for _, seed := range [][5]string{
		{`displayName:"home"`, "displayName desc", "de-DE", "", "moduleRefs"},
		{`price>1||meta.type=module&&price<=2`, "price asc, $score", "201", "0", "moduleRefs,imageRef"},
		{`meta.lastModified>=2024-01-01`, "meta.id desc", "", "variantX", ""},
		{`a=`, "nope", "xx-XX", "-1", ",,"},
		{`"`, "displayName sideways", "0", "1,2,3", "imageRef"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	s := deliverytest.NewSite(f)
	ctx := context.Background()
	ok := func(t *testing.T, op string, err error) {
		if err != nil && !errors.Is(err, delivery.ErrInvalidArgument) && !errors.Is(err, delivery.ErrNotFound) &&
			!errors.Is(err, delivery.ErrAmbiguous) {
			t.Fatalf("%s: an error that is not the client's: %v", op, err)
		}
	}
	f.Fuzz(func(t *testing.T, filter, sort, lang, variants, resolve string) {
		r := delivery.Request{Branch: "4", Filter: filter, Sort: sort, Lang: lang, Variants: variants,
			Resolve: resolve, ResolveReverse: resolve, Take: 10}
		_, err := s.Svc.List(ctx, r)
		ok(t, "List", err)
		r.Type = "webPage"
		_, err = s.Svc.Count(ctx, r)
		ok(t, "Count", err)
		_, err = s.Svc.Get(ctx, r, "home")
		ok(t, "Get", err)
		_, err = s.Svc.Occurrences(ctx, r, "displayName,"+sort, 5)
		ok(t, "Occurrences", err)
		_, err = s.Svc.Suggestions(ctx, r, delivery.SuggestOptions{Pattern: filter, Fields: "displayName", Take: 5})
		ok(t, "Suggestions", err)
	})
}
