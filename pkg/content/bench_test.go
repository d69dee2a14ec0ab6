package content

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// BenchmarkGetObjects reads 100 objects with 3 values each through a
// 4-branch chain on SQLite (one batch: a fixed number of queries).
func BenchmarkGetObjects(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cms.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := Bootstrap(ctx, st); err != nil {
		b.Fatal(err)
	}
	s := New(st, nil)
	_, typ, err := s.CreateObjects(ctx, "4", editor, []ObjectInput{{TypeID: RootID}})
	if err != nil {
		b.Fatal(err)
	}
	parent := BranchDefault
	for i := range 3 {
		br, _, err := s.CreateBranch(ctx, editor, []ValueInput{vin(AttrName, LanguageEnUS, fmt.Sprint("b", i)), vin(AttrBranchParent, 0, parent)})
		if err != nil {
			b.Fatal(err)
		}
		parent = br.ID
	}
	var in []ObjectInput
	for i := range 100 {
		in = append(in, ObjectInput{TypeID: typ[0], Values: []ValueInput{
			vin(AttrName, LanguageEnUS, fmt.Sprint("en ", i)), vin(AttrName, LanguageDeDE, fmt.Sprint("de ", i)), vin(AttrDataType, 0, "String")}})
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, in)
	if err != nil {
		b.Fatal(err)
	}
	idents := make([]string, len(ids))
	for i, id := range ids {
		idents[i] = strconv.FormatInt(id, 10)
	}
	branch := strconv.FormatInt(parent, 10)
	b.ResetTimer()
	for b.Loop() {
		objs, err := s.GetObjects(ctx, branch, idents, ReadOptions{Inherited: true, Languages: []string{"201"}})
		if err != nil || len(objs) != 100 {
			b.Fatal(len(objs), err)
		}
	}
}
