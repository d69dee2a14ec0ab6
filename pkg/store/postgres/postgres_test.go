package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/storetest"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// freshDatabase creates an empty database cms_test_<random> on the server of
// CMS_POSTGRES_URL, drops it at cleanup, and returns its URL.
func freshDatabase(t testing.TB) string {
	t.Helper()
	return testenv.PostgresDatabase(t)
}

func open(t testing.TB, dbURL string, opts ...store.Option) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dbURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, freshDatabase(t)) })
}

// TestTwoStoresOneDatabase: two pools (two "replicas") on one database run
// migrations idempotently and share the counters; only one of them claims.
func TestTwoStoresOneDatabase(t *testing.T) {
	ctx := context.Background()
	dbURL := freshDatabase(t)
	a := open(t, dbURL)
	b := open(t, dbURL)

	tx, err := a.Begin(ctx, store.TxMeta{User: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	txB, err := b.Begin(ctx, store.TxMeta{User: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if txB.ID() != tx.ID()+1 {
		t.Fatalf("second replica got tx id %d, want %d", txB.ID(), tx.ID()+1)
	}
	_ = txB.Rollback()

	evA, err := a.ClaimOutbox(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	evB, err := b.ClaimOutbox(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	// One relay at a time claims (relayLock): b stands by while a holds the
	// lock, so it cannot publish newer events before a's.
	if len(evA) != 6 || len(evB) != 0 {
		t.Fatalf("claims: a=%d events, b=%d events, want 6 and 0", len(evA), len(evB))
	}
	if err := a.AckOutbox(ctx, []int64{evA[0].ID, evA[1].ID}); err != nil {
		t.Fatal(err)
	}
	evA, err = a.ClaimOutbox(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(evA) != 4 {
		t.Fatalf("a's second claim: %d events, want the 4 left", len(evA))
	}
}

// TestOutboxLeaseExpiry: an event claimed but not acked is claimed again
// once the lease ends, with Attempts counting up.
func TestOutboxLeaseExpiry(t *testing.T) {
	ctx := context.Background()
	s := open(t, freshDatabase(t), store.WithOutboxLease(200*time.Millisecond))
	tx, err := s.Begin(ctx, store.TxMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ev, err := s.ClaimOutbox(ctx, 10)
	if err != nil || len(ev) != 1 || ev[0].Attempts != 1 {
		t.Fatalf("first claim = %+v, %v", ev, err)
	}
	if again, err := s.ClaimOutbox(ctx, 10); err != nil || len(again) != 0 {
		t.Fatalf("claim during lease = %+v, %v", again, err)
	}
	time.Sleep(300 * time.Millisecond)
	again, err := s.ClaimOutbox(ctx, 10)
	if err != nil || len(again) != 1 || again[0].ID != ev[0].ID || again[0].Attempts != 2 {
		t.Fatalf("claim after lease = %+v, %v", again, err)
	}
}

// BenchmarkWriteTx: one transaction with 10 objects x 5 values (see storetest).
func BenchmarkWriteTx(b *testing.B) {
	storetest.BenchmarkWriteTx(b, open(b, freshDatabase(b)))
}

// TestTextPostgreSQLCannotStore: a NUL character (valid in Go strings,
// JSON and SQLite, refused by PostgreSQL text) in a transaction comment or
// a comment filter is ErrInvalidArgument, which the services answer with
// 400, not an internal error.
func TestTextPostgreSQLCannotStore(t *testing.T) {
	ctx := context.Background()
	s := open(t, freshDatabase(t))
	if _, err := s.Begin(ctx, store.TxMeta{User: "a", Comment: "a\x00b"}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Begin with a NUL in the comment: %v, want ErrInvalidArgument", err)
	}
	if _, err := s.ListComments(ctx, store.CommentQuery{User: "x\x00"}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ListComments by a user with a NUL: %v, want ErrInvalidArgument", err)
	}
	tx, err := s.Begin(ctx, store.TxMeta{User: "a", Comment: "fine"})
	if err != nil {
		t.Fatalf("plain text: %v", err)
	}
	_ = tx.Rollback()
}

// BenchmarkSingleWrites: single-object write transactions through the
// store against pgx alone on the same database (default pool, READ
// COMMITTED, synchronous_commit as the server has it), inserting a row and
// an outbox row and committing per write.
func BenchmarkSingleWrites(b *testing.B) {
	ctx := context.Background()
	dbURL := freshDatabase(b)
	s := open(b, dbURL)
	raw, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(ctx, `CREATE TABLE bench_t (id BIGINT PRIMARY KEY, v TEXT NOT NULL);
		CREATE TABLE bench_o (id BIGSERIAL PRIMARY KEY, tx BIGINT NOT NULL, msg TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkSingleWrites(b, s, func(ctx context.Context, i int64) error {
		tx, err := raw.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		v := strconv.FormatInt(i, 10)
		if _, err := tx.Exec(ctx, `INSERT INTO bench_t (id, v) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = excluded.v`, i, v); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO bench_o (tx, msg) VALUES ($1, $2)`, i, v); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// TestRandomPageCost: the store's sessions plan with random_page_cost 1.1
// unless the URL names a value; an empty one keeps the server's.
func TestRandomPageCost(t *testing.T) {
	ctx := context.Background()
	dbURL := freshDatabase(t)
	with := func(param string) string {
		if param == "" {
			return dbURL
		}
		if strings.Contains(dbURL, "?") {
			return dbURL + "&" + param
		}
		return dbURL + "?" + param
	}
	show := func(t *testing.T, conn interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) string {
		var v string
		if err := conn.QueryRow(ctx, "SHOW random_page_cost").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	plain, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	server := show(t, plain)
	for _, c := range []struct{ param, want string }{
		{"", postgres.DefaultRandomPageCost},
		{"random_page_cost=2.5", "2.5"},
		{"random_page_cost=", server},
	} {
		if got := show(t, open(t, with(c.param), store.WithMigrate(false)).Pool()); got != c.want {
			t.Errorf("URL with %q: random_page_cost = %s, want %s", c.param, got, c.want)
		}
	}
}
