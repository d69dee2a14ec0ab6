package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// historyUpdates is how many single-value updates TestHistoryGrowth writes.
const historyUpdates = 10_000

// TestHistoryGrowth measures what one version costs on SQLite: 10,000
// transactions each replacing one 40-character string value of one
// object. It reports the bytes of value_versions per version and of the
// whole file per update (the transaction record included), and fails when
// a version costs more than maxVersionBytes: the history must stay a
// small multiple of the value it keeps.
func TestHistoryGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 transactions")
	}
	const maxVersionBytes = 160
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cms.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(i int) {
		tx, err := s.Begin(ctx, store.TxMeta{User: "editor", Comment: "edit"})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if i == 0 {
			if err := tx.PutObjects(ctx, store.Object{ID: 1, Branch: 4, TypeID: 5, GUID: "0d9c6b5e-3c1e-4f6b-9a51-6f2d1c0e7a11"}); err != nil {
				t.Fatal(err)
			}
		}
		v := fmt.Sprintf("%q", fmt.Sprintf("revision %030d", i))
		if err := tx.PutValues(ctx, store.Value{ObjectID: 1, Branch: 4, AttributeID: 1000, Language: 201, JSON: []byte(v)}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// size is the bytes of the file's pages in use and of value_versions'
	// table and index pages (dbstat counts page bytes, free space included).
	size := func() (file, versions int64) {
		var pages, pageSize, free int64
		for q, dst := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA page_size": &pageSize, "PRAGMA freelist_count": &free} {
			if err := db.QueryRow(q).Scan(dst); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.QueryRow(`SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN ('value_versions', 'value_versions_tx')`).Scan(&versions); err != nil {
			t.Fatalf("dbstat: %v", err)
		}
		return (pages - free) * pageSize, versions
	}
	write(0)
	file0, ver0 := size()
	for i := 1; i <= historyUpdates; i++ {
		write(i)
	}
	file1, ver1 := size()
	perVersion := float64(ver1-ver0) / historyUpdates
	perUpdate := float64(file1-file0) / historyUpdates
	t.Logf("%d updates of one 40-character value: value_versions grew %d bytes (%.1f B per version), the database %d bytes (%.1f B per update, the transaction record included)",
		historyUpdates, ver1-ver0, perVersion, file1-file0, perUpdate)
	if perVersion > maxVersionBytes {
		t.Fatalf("a version costs %.1f bytes, more than %d", perVersion, maxVersionBytes)
	}
	// Reading the state of then and a page of the history stays cheap
	// with 10,000 versions of one value.
	last, err := s.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	vals, err := s.ValuesAsOf(ctx, []int64{4}, []int64{1}, last-historyUpdates/2)
	if err != nil || len(vals) != 1 || string(vals[0].JSON) != fmt.Sprintf("%q", fmt.Sprintf("revision %030d", historyUpdates/2)) {
		t.Fatalf("as of the middle: %v %v", err, vals)
	}
	asOf := time.Since(start)
	start = time.Now()
	page, err := s.ObjectHistory(ctx, store.HistoryQuery{Branch: 4, ObjectID: 1, BeforeTx: last - historyUpdates/2, Limit: 21})
	if err != nil || len(page.Transactions) != 21 {
		t.Fatalf("a history page in the middle: %v, %d transactions", err, len(page.Transactions))
	}
	history := time.Since(start)
	t.Logf("with %d versions: a read as of the middle took %v, a history page of 21 transactions %v", historyUpdates, asOf, history)
	if asOf > 2*time.Second || history > 2*time.Second {
		t.Fatalf("reads over %d versions are too slow: as of %v, history page %v", historyUpdates, asOf, history)
	}
}
