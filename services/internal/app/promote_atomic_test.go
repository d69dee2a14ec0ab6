package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// promotedObjects is the size of the promote TestPromoteIsAtomic reads
// during (issue 33: 10,000 objects).
const promotedObjects = 10000

// TestPromoteIsAtomicEmbedded: on cms run (SQLite, Bleve), Delivery and
// Index, read continuously during a promote of 10,000 new objects, answer
// all of them or none; the time until Delivery serves them is logged.
func TestPromoteIsAtomicEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	runPromoteAtomic(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

// TestPromoteIsAtomicDistributed: the same on PostgreSQL, NATS,
// Elasticsearch and Redis.
func TestPromoteIsAtomicDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "promoteatomic")
	runPromoteAtomic(t, "http://"+startConfigured(t, config(TargetAll)).HTTPAddr())
}

func runPromoteAtomic(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	itemType, branch := seedChild(t, admin, "item", "Item", "Big release", promotedObjects)
	reads := readParent(t, admin, "item", itemType, promotedObjects, time.Time{})
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	var p promoteAnswer
	admin.call(http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/%d/promote", branch), `{"comment":"big release"}`, &p)
	answered := time.Since(sent)
	if p.PromotedObjects != promotedObjects || p.Transaction == nil {
		t.Fatalf("promote: %+v", p)
	}
	if !reads.wait(time.Now().Add(60 * time.Second)) {
		t.Fatalf("Delivery did not serve the %d promoted objects within 60 s: %v", promotedObjects, reads.seen)
	}
	reads.check(t, "promote")
	t.Logf("promote of %d objects: answered in %s, visible in Index %s and in Delivery %s after it was sent; reads %v",
		promotedObjects, answered.Round(time.Millisecond), reads.indexedAt.Sub(sent).Round(time.Millisecond),
		reads.visibleAt.Sub(sent).Round(time.Millisecond), reads.seen)
}
