package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/codegen/codegentest"
	"github.com/cmsplatform/cms/pkg/content"
)

// TestGeneratedTypesFitDelivery: on `cms run`, the TypeScript the code
// generator answers for the seeded model (every data type, multiple and
// language-dependent values, references, awkward names) type-checks real
// Delivery answers for that model with tsc --strict: one object with its
// resolved references, in English and German, and a list. One tsc run.
func TestGeneratedTypesFitDelivery(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	f, err := codegentest.Seed(context.Background(), content.New(srv.comps.Store, nil))
	if err != nil {
		t.Fatal(err)
	}
	admin := httpClient{t, base, "admin", "test-password"}
	models := admin.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/4/generators/typescript/types", "",
		"Accept", "text/plain")
	wait := []string{"X-Cms-Min-Version", strconv.FormatInt(f.Transaction, 10), "X-Cms-Max-Wait", "30s"}
	sensor := f.Objects["sensor"]
	resolve := codegentest.AttrAPI("ObjRef", false, false) + "," + codegentest.AttrAPI("ObjRef", true, false)
	// By type id: Delivery matches type names without case, and the
	// fixture's "Product" collides with "product" on purpose.
	typ := f.Types["product"]
	one := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/4/types/%d/objects/%d?resolve=%s", typ, sensor, resolve), "", wait...)
	german := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/4/objects/%d?lang=de-DE", sensor), "", wait...)
	list := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/4/types/%d/objects?take=10&resolve=%s", typ, resolve), "", wait...)
	answers := "import type { ProductResult, ProductList } from \"./models\";\n\n" +
		"export const one: ProductResult = " + string(one.body) + ";\n\n" +
		"export const german: ProductResult = " + string(german.body) + ";\n\n" +
		"export const list: ProductList = " + string(list.body) + ";\n"
	codegentest.CompileTypeScript(t, map[string]string{"models.ts": string(models.body), "answers.ts": answers})
	for _, attr := range []string{"vDecimalLang", "vStringMultiLang", "vObjRefMulti", "vXmlRefSimpleHtml", "my-attr.v2", "toString"} {
		if !containsKey(one.body, attr) {
			t.Errorf("the Delivery answer has no prop %q, so it checks nothing about it: %s", attr, one.body)
		}
	}
}

func containsKey(body []byte, key string) bool { return strings.Contains(string(body), `"`+key+`":`) }
