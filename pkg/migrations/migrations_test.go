package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/cmsplatform/cms/pkg/migrations"
)

func TestListBothDialectsAlike(t *testing.T) {
	lite, err := migrations.List(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrations.List(migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("sqlite has %d migrations, postgres %d: every version needs both", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].Version != pg[i].Version || lite[i].Name != pg[i].Name {
			t.Fatalf("migration %d: sqlite %03d_%s vs postgres %03d_%s", i, lite[i].Version, lite[i].Name, pg[i].Version, pg[i].Name)
		}
		if i > 0 && lite[i].Version <= lite[i-1].Version {
			t.Fatalf("versions not increasing at %d", lite[i].Version)
		}
	}
	if _, err := migrations.List("oracle"); !errors.Is(err, migrations.ErrUnknownDialect) {
		t.Fatalf("unknown dialect: %v", err)
	}
}

func TestApplySQLiteIdempotent(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	all, _ := migrations.List(migrations.SQLite)

	applied, err := migrations.Apply(ctx, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("first Apply applied %d of %d", len(applied), len(all))
	}
	again, err := migrations.Apply(ctx, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("second Apply applied %d migrations, want 0", len(again))
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(all) {
		t.Fatalf("schema_migrations rows = %d, %v; want %d", n, err, len(all))
	}
	for _, table := range []string{"counters", "transactions", "objects", "object_values", "outbox"} {
		if _, err := db.ExecContext(ctx, `SELECT 1 FROM `+table+` LIMIT 1`); err != nil {
			t.Errorf("table %s: %v", table, err)
		}
	}
}
