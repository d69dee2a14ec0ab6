package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/migrations"
)

// TestObjectVersionsBackfill: migration 011 gives the object rows written
// before it a live version at their creation and their current state at
// their last change (one version when they never changed).
func TestObjectVersionsBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	all, err := migrations.List(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	var backfill string
	for _, m := range all {
		switch {
		case m.Version < 11:
			if _, err := db.ExecContext(ctx, m.SQL); err != nil {
				t.Fatalf("%03d: %v", m.Version, err)
			}
		case m.Version == 11:
			backfill = m.SQL
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO objects (branch, id, type_id, guid, api_identifier, deleted, created_tx, modified_tx)
		VALUES (4, 1, 5, 'g1', NULL, 0, 3, 3), (4, 2, 5, 'g2', 'two', 1, 3, 7)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, backfill); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, tx_id, COALESCE(api_identifier, ''), deleted FROM object_versions ORDER BY id, tx_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, tx int64
		var api string
		var deleted bool
		if err := rows.Scan(&id, &tx, &api, &deleted); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d@%d:%s:%v", id, tx, api, deleted))
	}
	if want := "1@3::false 2@3:two:false 2@7:two:true"; strings.Join(got, " ") != want {
		t.Fatalf("backfilled versions: got %q, want %q", strings.Join(got, " "), want)
	}
}
