package content

import (
	"context"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/store/storetest"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// BenchmarkUpdateObject measures single-object updates through the content
// service (UpdateObjects of one value: branch resolution, validation, one
// durable transaction with its outbox event), sequentially and with 8
// clients, against the bare store writing one object, value and event per
// transaction in the same run (x-store).
func BenchmarkUpdateObject(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", backend, clients), func(b *testing.B) {
				st, s, attr, objs := writeBenchSetup(b, backend)
				storetest.CompareWrites(b, clients, "store", func(ctx context.Context, i int64) error {
					_, err := s.UpdateObjects(ctx, "4", Change{Caller: &auth.Principal{Name: "bench"}},
						[]ObjectInput{{ID: objs[i%int64(len(objs))], Values: []ValueInput{vin(attr, 0, i)}}})
					return err
				}, func(ctx context.Context, i int64) error { return storetest.SingleWrite(ctx, st, i) })
			})
		}
	}
}

// writeBenchSetup opens a bootstrapped store with a type, an Integer
// attribute and 8 objects of the type.
func writeBenchSetup(b *testing.B, backend string) (store.Store, *Service, int64, []int64) {
	ctx := context.Background()
	var st store.Store
	var err error
	switch backend {
	case "sqlite":
		st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "cms.db"))
	default:
		st, err = postgres.Open(ctx, testenv.PostgresDatabase(b))
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := Bootstrap(ctx, st); err != nil {
		b.Fatal(err)
	}
	s := New(st, nil)
	_, typ, err := s.CreateObjects(ctx, "4", editor, []ObjectInput{{TypeID: RootID, Values: []ValueInput{vin(AttrName, LanguageEnUS, "Article")}}})
	if err != nil {
		b.Fatal(err)
	}
	_, attrs, err := s.CreateObjects(ctx, "4", editor, []ObjectInput{{TypeID: TypeAttribute, Values: []ValueInput{vin(AttrDataType, 0, "Integer")}}})
	if err != nil {
		b.Fatal(err)
	}
	in := make([]ObjectInput, 8)
	for i := range in {
		in[i] = ObjectInput{TypeID: typ[0]}
	}
	_, objs, err := s.CreateObjects(ctx, "4", editor, in)
	if err != nil {
		b.Fatal(err)
	}
	return st, s, attrs[0], objs
}
