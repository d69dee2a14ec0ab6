package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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
	itemType := admin.create(obj(0, "item", v(1000, 201, "Item"))).CreatedObjectIDs[0]
	r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
		`{"comment":"branch","values":[`+v(1000, 201, "Big release")+`,`+v(4000, 0, 4)+`]}`)
	var br struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &br); err != nil || br.Meta.ID == 0 {
		t.Fatalf("create branch: %s", r.body)
	}
	child := fmt.Sprintf("/apis/cms/v1/branches/%d", br.Meta.ID)
	var last write
	for start := 0; start < promotedObjects; start += 1000 {
		objs := make([]string, 0, 1000)
		for i := start; i < start+1000; i++ {
			objs = append(objs, obj(itemType, "", v(1000, 201, fmt.Sprintf("item %d", i))))
		}
		res := admin.must(http.StatusCreated, http.MethodPost, child+"/objects", `{"objects":[`+strings.Join(objs, ",")+`]}`)
		if err := json.Unmarshal(res.body, &last); err != nil {
			t.Fatal(err)
		}
	}
	wait := fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"00:01:00"`, last.Transaction.ID)
	admin.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount", `{"filter":{}, `+wait+`}`)

	deliveryCount := func() (int, error) {
		res := admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/item/count", "")
		var c struct {
			Count int `json:"count"`
		}
		return c.Count, json.Unmarshal(res.body, &c)
	}
	indexCount := func() (int, error) {
		res := admin.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount",
			fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]}}`, itemType))
		var c struct {
			Count int `json:"count"`
		}
		return c.Count, json.Unmarshal(res.body, &c)
	}
	if n, err := deliveryCount(); err != nil || n != 0 {
		t.Fatalf("Delivery counts %d items on the parent before the promote (%v)", n, err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]map[int]int{"delivery": {}, "index": {}}
	var visibleAt, indexedAt time.Time
	for name, read := range map[string]func() (int, error){"delivery": deliveryCount, "index": indexCount} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := read()
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				mu.Lock()
				seen[name][n]++
				if name == "delivery" && n == promotedObjects && visibleAt.IsZero() {
					visibleAt = time.Now()
				}
				if name == "index" && n == promotedObjects && indexedAt.IsZero() {
					indexedAt = time.Now()
				}
				mu.Unlock()
				// Continuous, but leaving the indexer the cores it
				// shares with the readers on a 2-core machine.
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	var p promoteAnswer
	admin.call(http.StatusOK, http.MethodPost, child+"/promote", `{"comment":"big release"}`, &p)
	answered := time.Since(sent)
	if p.PromotedObjects != promotedObjects || p.Transaction == nil {
		t.Fatalf("promote: %+v", p)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		done := !visibleAt.IsZero() && seen["index"][promotedObjects] > 0
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if visibleAt.IsZero() {
		t.Fatalf("Delivery did not serve the %d promoted objects within 60 s: %v", promotedObjects, seen)
	}
	for name, counts := range seen {
		for n, times := range counts {
			if n != 0 && n != promotedObjects {
				t.Errorf("%s answered %d of the %d promoted objects (%d times): a part of the promote", name, n, promotedObjects, times)
			}
		}
		if counts[0] == 0 || counts[promotedObjects] == 0 {
			t.Errorf("%s was not read both before and after the promote: %v", name, counts)
		}
	}
	t.Logf("promote of %d objects: answered in %s, visible in Index %s and in Delivery %s after it was sent; reads %v",
		promotedObjects, answered.Round(time.Millisecond), indexedAt.Sub(sent).Round(time.Millisecond),
		visibleAt.Sub(sent).Round(time.Millisecond), seen)
}
