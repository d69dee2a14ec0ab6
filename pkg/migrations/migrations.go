// Package migrations holds the SQL schema of pkg/store for each dialect and a
// tiny migrator that applies it.
//
// Files live in sql/<dialect>/NNN_name.sql (NNN = version, strictly
// increasing, never edited once released). Apply records applied versions in
// the schema_migrations table and is idempotent: running it again applies
// only what is missing. All pending migrations run in one transaction, so a
// failing migration leaves the schema unchanged; on PostgreSQL an advisory
// lock makes concurrent Apply calls (several replicas starting) wait for each
// other instead of racing.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// Dialect names a SQL dialect with its own migration files.
type Dialect string

// Supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// ErrUnknownDialect is returned for a dialect without migration files.
var ErrUnknownDialect = errors.New("migrations: unknown dialect")

//go:embed sql/sqlite/*.sql sql/postgres/*.sql
var files embed.FS

// Migration is one schema step.
type Migration struct {
	Version int
	Name    string // file name without the version and extension
	SQL     string
}

var fileName = regexp.MustCompile(`^(\d{3,})_([a-z0-9_]+)\.sql$`)

// List returns the migrations of a dialect in version order.
func List(d Dialect) ([]Migration, error) {
	if d != SQLite && d != Postgres {
		return nil, fmt.Errorf("%w: %q", ErrUnknownDialect, d)
	}
	dir := path.Join("sql", string(d))
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: read %s: %w", dir, err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: bad file name %s/%s", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: version %d used by %s and %s", v, prev, e.Name())
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(files, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// advisoryLockKey is an arbitrary constant shared by every cms process.
const advisoryLockKey = 0x636d73_6d6967 // "cms mig"

// Apply applies the pending migrations of dialect d to db and returns the ones
// it applied (none when the schema is current). For SQLite, db should be the
// single writer connection.
func Apply(ctx context.Context, db *sql.DB, d Dialect) ([]Migration, error) {
	all, err := List(d)
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("migrations: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()

	if d == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(advisoryLockKey)); err != nil {
			return nil, fmt.Errorf("migrations: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return nil, fmt.Errorf("migrations: create schema_migrations: %w", err)
	}
	done := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, err
		}
		done[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	insert := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
	if d == Postgres {
		insert = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
	}
	var applied []Migration
	for _, m := range all {
		if done[m.Version] {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("migrations: %s %03d_%s: %w", d, m.Version, m.Name, err)
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		if _, err := tx.ExecContext(ctx, insert, m.Version, m.Name, now); err != nil {
			return nil, fmt.Errorf("migrations: record %03d: %w", m.Version, err)
		}
		applied = append(applied, m)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrations: commit: %w", err)
	}
	return applied, nil
}

// Pending returns the migrations of dialect d that db has not applied, in
// version order, without changing anything (all of them when the schema
// table does not exist yet).
func Pending(ctx context.Context, db *sql.DB, d Dialect) ([]Migration, error) {
	all, err := List(d)
	if err != nil {
		return nil, err
	}
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		var exists int
		q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
		if d == Postgres {
			q = `SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'`
		}
		if qerr := db.QueryRowContext(ctx, q).Scan(&exists); qerr == nil && exists == 0 {
			return all, nil
		}
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []Migration
	for _, m := range all {
		if !applied[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}
