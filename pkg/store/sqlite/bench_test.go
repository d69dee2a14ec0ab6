package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store/storetest"
)

// BenchmarkSingleWrites: single-object write transactions through the
// store against database/sql on the same driver, with the same pragmas
// (WAL, synchronous=NORMAL, BEGIN IMMEDIATE, one writer connection),
// inserting a row and an outbox row and committing per write.
func BenchmarkSingleWrites(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "cms.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	raw, err := sql.Open("sqlite", dsn(filepath.Join(dir, "raw.db"), false))
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
		CREATE TABLE o (id INTEGER PRIMARY KEY AUTOINCREMENT, tx INTEGER NOT NULL, msg TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkSingleWrites(b, s, func(ctx context.Context, i int64) error {
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO t (id, v) VALUES (?, ?)`, i, strconv.FormatInt(i, 10)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO o (tx, msg) VALUES (?, ?)`, i, strconv.FormatInt(i, 10)); err != nil {
			return err
		}
		return tx.Commit()
	})
}
