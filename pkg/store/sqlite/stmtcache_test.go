package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStmtCache: statements are prepared once per text, one met in a
// write transaction is prepared after it (the single writer connection is
// busy until then) and then reused inside transactions, and the cache
// stops growing at its bound.
func TestStmtCache(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "c.db"), false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	c := newStmtCache(db)
	if _, err := (querier{q: db, cache: c}).Exec(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO t (v) VALUES (?)`
	for i := range 3 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		q := querier{q: tx, cache: c, tx: tx}
		if _, err := q.Exec(ctx, ins, i); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		c.bg.Wait() // the background prepare of the first round
	}
	c.mu.Lock()
	_, cached := c.stmts[ins]
	c.mu.Unlock()
	if !cached {
		t.Fatal("a statement run in write transactions was not prepared for the next ones")
	}
	var n int
	if err := (querier{q: db, cache: c}).QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows = %d, %v; want 3", n, err)
	}
	for i := range maxCachedStatements + 10 {
		if err := (querier{q: db, cache: c}).QueryRow(ctx, `SELECT `+strconv.Itoa(i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d = %d, %v", i, n, err)
		}
	}
	if len(c.stmts) != maxCachedStatements {
		t.Fatalf("%d statements cached, want the bound %d", len(c.stmts), maxCachedStatements)
	}
	c.close()
	if err := (querier{q: db, cache: c}).QueryRow(ctx, `SELECT 7`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("after close: %d, %v", n, err)
	}
}
