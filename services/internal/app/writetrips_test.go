package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestWriteRoundTrips counts the PostgreSQL round trips of one
// Cms_CreateObjects of one catalogue article on `cms serve
// --target=all` (through testenv.PGRecorder): the write's own, and the
// outbox relay's for its event, and lists them in the log.
func TestWriteRoundTrips(t *testing.T) {
	config, _ := isolatedDistributed(t, "writetrips")
	cfg := config(TargetAll)
	rec := testenv.NewPGRecorder(t, cfg.Store.URL)
	cfg.Store.URL = rec.URL
	ours := "http://" + benchStart(t, cfg).HTTPAddr()
	target := cmsload.Target{URL: ours, User: "admin", Password: "test-password", Branch: 4, Client: cmsload.NewClient(4)}
	cat, err := cmsload.SeedCatalogue(context.Background(), target, cmsload.CatalogueOptions{Articles: 20, Wait: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &distWorkload{cat: cat, client: target.Client}
	write := func(i int64) {
		code, body, err := w.post(ours, "/apis/cms/v1/branches/4/objects", w.createBody(i))
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create: %d %v %.300s", code, err, body)
		}
	}
	// Warm up: every pool connection has prepared the statements.
	for i := range int64(20) {
		write(i)
	}
	time.Sleep(2 * time.Second)
	rec.Start()
	write(100)
	time.Sleep(1500 * time.Millisecond)
	trips := rec.Stop()

	has := func(rt testenv.PGRoundTrip, prefix string) bool {
		for _, s := range rt.Statements {
			if strings.HasPrefix(strings.Join(strings.Fields(s), " "), prefix) {
				return true
			}
		}
		return false
	}
	prepareOnly := func(rt testenv.PGRoundTrip) bool {
		for _, s := range rt.Statements {
			if !strings.HasPrefix(s, "prepare: ") {
				return false
			}
		}
		return true
	}
	// The write: the transaction that stores the article's object row,
	// its connection's round trips from the BEGIN to the COMMIT, but for
	// the statement cache's (a connection prepares each statement once).
	// Background writes (none expected) are other transactions.
	var mine []testenv.PGRoundTrip
	prepares := 0
	open := map[int][]testenv.PGRoundTrip{} // conn → its open transaction's trips
	cached := map[int]int{}
	for _, rt := range trips {
		if has(rt, "begin isolation level") {
			open[rt.Conn], cached[rt.Conn] = nil, 0
		}
		tx, ok := open[rt.Conn]
		if !ok {
			continue
		}
		if prepareOnly(rt) {
			cached[rt.Conn]++
			continue
		}
		tx = append(tx, rt)
		open[rt.Conn] = tx
		if !has(rt, "commit") {
			continue
		}
		delete(open, rt.Conn)
		for _, q := range tx {
			if has(q, "INSERT INTO objects") && mine == nil {
				mine, prepares = tx, cached[rt.Conn]
			}
		}
	}
	if len(mine) == 0 {
		t.Fatalf("no write transaction recorded:\n%s", listTrips(trips))
	}
	// The relay: the claim that leased the event (and each later empty
	// poll) asks for the lock in the same round trip; the ack deletes it.
	var relay []testenv.PGRoundTrip
	for _, rt := range trips {
		if rt.At.Before(mine[len(mine)-1].At) {
			continue
		}
		if has(rt, "WITH c AS ( SELECT id FROM outbox") || has(rt, "DELETE FROM outbox") {
			relay = append(relay, rt)
		}
	}
	t.Logf("the write: %d round trips (and %d of the statement cache):\n%s", len(mine), prepares, listTrips(mine))
	t.Logf("the relay after its commit:\n%s", listTrips(relay))
	if len(mine[0].Statements) < 2 {
		t.Errorf("the BEGIN was a round trip of its own")
	}
	if !has(mine[len(mine)-1], "INSERT INTO outbox") {
		t.Errorf("the outbox row did not go with the COMMIT")
	}
	// The budget: 10 round trips (the BEGIN with the transaction record,
	// the branch tree (2), the types and attributes, the ids, the
	// uniqueness check, the attributes' values, the referenced objects,
	// the objects, then the values, the event and the COMMIT). More is a
	// regression: find the new one in the log.
	if len(mine) > 10 {
		t.Errorf("the write took %d round trips, want at most 10", len(mine))
	}
	acked := false
	for _, rt := range relay {
		acked = acked || has(rt, "DELETE FROM outbox")
		if has(rt, "WITH c AS") && !has(rt, "SELECT EXISTS (SELECT 1 FROM pg_locks") {
			t.Errorf("a claim without the lock check in its round trip")
		}
	}
	if !acked {
		t.Errorf("the relay did not ack the event within 1.5 s")
	}
}

// listTrips is trips one a line per statement, for the log.
func listTrips(trips []testenv.PGRoundTrip) string {
	var sb strings.Builder
	for i, rt := range trips {
		fmt.Fprintf(&sb, "%2d. conn %d:", i+1, rt.Conn)
		for _, s := range rt.Statements {
			fmt.Fprintf(&sb, "\n\t%.140s", strings.Join(strings.Fields(s), " "))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}
