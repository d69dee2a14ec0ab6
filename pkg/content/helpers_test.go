package content

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// backends runs fn once on SQLite and once on PostgreSQL (skipped locally
// without CMS_POSTGRES_URL, failing under CI=true), each with a fresh,
// bootstrapped store.
func backends(t *testing.T, fn func(t *testing.T, s *Service, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cms.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		fn(t, boot(t, st), st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(context.Background(), freshDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		fn(t, boot(t, st), st)
	})
}

func boot(t *testing.T, st store.Store) *Service {
	t.Helper()
	if err := Bootstrap(context.Background(), st); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	return New(st, nil)
}

// freshDatabase creates an empty database on the CMS_POSTGRES_URL server,
// dropped at cleanup, and returns its URL.
func freshDatabase(t *testing.T) string {
	t.Helper()
	return testenv.PostgresDatabase(t)
}

var ctxBG = context.Background()

var editor = Change{Caller: &auth.Principal{Name: "editor"}, Comment: "test"}

func id(n int64) string { return strconv.FormatInt(n, 10) }

func js(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func vin(attr, lang int64, v any) ValueInput {
	return ValueInput{Attribute: attr, Language: lang, JSON: js(v)}
}

func ptr[T any](v T) *T { return &v }

// chk(f())(t) returns f's value, failing t on f's error.
func chk[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// schema is a small custom model: a type "article" with a language
// dependent title (String), a multi-valued reference "related" to
// articles, an integer "rank" and a SimpleHtml "body".
type schema struct {
	article, title, related, rank, body int64
}

func newSchema(t *testing.T, s *Service) schema {
	t.Helper()
	_, typ := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
		{TypeID: RootID, APIIdentifier: ptr("article"), Values: []ValueInput{vin(AttrName, LanguageEnUS, "Article")}},
	}))
	_, attrs := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
		{TypeID: TypeAttribute, APIIdentifier: ptr("title"), Values: []ValueInput{
			vin(AttrDataType, 0, "String"), vin(AttrLanguageDependent, 0, true)}},
		{TypeID: TypeAttribute, APIIdentifier: ptr("related"), Values: []ValueInput{
			vin(AttrDataType, 0, "ObjRef"), vin(AttrAllowMultiple, 0, true), vin(AttrReferencedTypes, 0, typ[0])}},
		{TypeID: TypeAttribute, APIIdentifier: ptr("rank"), Values: []ValueInput{vin(AttrDataType, 0, "Integer")}},
		{TypeID: TypeAttribute, APIIdentifier: ptr("body"), Values: []ValueInput{vin(AttrDataType, 0, "XmlRef.SimpleHtml")}},
	}))
	return schema{article: typ[0], title: attrs[0], related: attrs[1], rank: attrs[2], body: attrs[3]}
}

func must2(t *testing.T) func(Transaction, []int64, error) (Transaction, []int64) {
	return func(tr Transaction, ids []int64, err error) (Transaction, []int64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tr, ids
	}
}

// valuesOf renders values as "attr/lang/variant/sort=json" for comparisons.
func valuesOf(o Object) []string {
	out := make([]string, len(o.Values))
	for i, v := range o.Values {
		out[i] = strconv.FormatInt(v.Attribute, 10) + "/" + strconv.FormatInt(v.Language, 10) + "/" +
			strconv.FormatInt(v.Variant, 10) + "/" + strconv.FormatInt(v.SortReverse, 10) + "=" + string(v.JSON)
	}
	return out
}
