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

// seedChild creates the type typeAPI (named typeName) and a child of the
// default branch named branchName holding n new objects of it ("<typeAPI>
// <i>"), and waits until the Index has them all; it returns the type and
// the child's id.
func seedChild(t *testing.T, admin httpClient, typeAPI, typeName, branchName string, n int) (itemType, branch int64) {
	t.Helper()
	itemType = admin.create(obj(0, typeAPI, v(1000, 201, typeName))).CreatedObjectIDs[0]
	r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
		`{"comment":"branch","values":[`+v(1000, 201, branchName)+`,`+v(4000, 0, 4)+`]}`)
	var br struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &br); err != nil || br.Meta.ID == 0 {
		t.Fatalf("create branch: %s", r.body)
	}
	var last write
	for start := 0; start < n; start += 1000 {
		objs := make([]string, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			objs = append(objs, obj(itemType, "", v(1000, 201, fmt.Sprintf("%s %d", typeAPI, i))))
		}
		res := admin.must(http.StatusCreated, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/%d/objects", br.Meta.ID),
			`{"objects":[`+strings.Join(objs, ",")+`]}`)
		if err := json.Unmarshal(res.body, &last); err != nil {
			t.Fatal(err)
		}
	}
	wait := fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"00:01:00"`, last.Transaction.ID)
	admin.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount", `{"filter":{}, `+wait+`}`)
	return itemType, br.Meta.ID
}

// parentReads reads how many objects of one type the default branch has,
// from Delivery and from the Index, continuously until wait ends, to show
// that a change of want objects arrives whole: every answer is 0 or want.
type parentReads struct {
	want      int
	notBefore time.Time // answers other than 0 to reads sent before it are early
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup

	mu                   sync.Mutex
	seen                 map[string]map[int]int // reader → count answered → times
	early                []string
	visibleAt, indexedAt time.Time // when Delivery and the Index first answered want
}

// readParent checks that Delivery counts no object of the type typeAPI
// (id itemType) on the default branch yet and starts the readers.
func readParent(t *testing.T, admin httpClient, typeAPI string, itemType int64, want int, notBefore time.Time) *parentReads {
	t.Helper()
	// count runs on the readers' goroutines too: it reports, never fails t.
	count := func(method, path, body string) (int, error) {
		res, err := admin.send(method, path, body)
		if err != nil {
			return 0, err
		}
		if res.code != http.StatusOK {
			return 0, fmt.Errorf("%s %s = %d: %s", method, path, res.code, res.body)
		}
		var c struct {
			Count int `json:"count"`
		}
		return c.Count, json.Unmarshal(res.body, &c)
	}
	readers := map[string]func() (int, error){
		"delivery": func() (int, error) {
			return count(http.MethodGet, "/delivery/api/branches/4/types/"+typeAPI+"/count", "")
		},
		"index": func() (int, error) {
			return count(http.MethodPost, "/apis/index/v1/branches/4/objectCount", fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]}}`, itemType))
		},
	}
	if n, err := readers["delivery"](); err != nil || n != 0 {
		t.Fatalf("Delivery counts %d objects of %s on the parent before the change (%v)", n, typeAPI, err)
	}
	r := &parentReads{want: want, notBefore: notBefore, stop: make(chan struct{}), seen: map[string]map[int]int{"delivery": {}, "index": {}}}
	// A test that fails before wait still stops its readers before it ends.
	t.Cleanup(r.halt)
	for name, read := range readers {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				select {
				case <-r.stop:
					return
				default:
				}
				sent := time.Now()
				n, err := read()
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				r.record(name, n, sent)
				// Continuous, but leaving the indexer the cores it
				// shares with the readers on a 2-core machine.
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	return r
}

func (r *parentReads) record(name string, n int, sent time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[name][n]++
	if n != 0 && sent.Before(r.notBefore) {
		r.early = append(r.early, fmt.Sprintf("%s answered %d to a read sent %s before its time", name, n, r.notBefore.Sub(sent)))
	}
	if n == r.want && name == "delivery" && r.visibleAt.IsZero() {
		r.visibleAt = time.Now()
	}
	if n == r.want && name == "index" && r.indexedAt.IsZero() {
		r.indexedAt = time.Now()
	}
}

// wait reads until Delivery and the Index both answered want or deadline
// passed, reads 200 ms more and stops the readers; it reports whether
// Delivery answered want.
func (r *parentReads) wait(deadline time.Time) bool {
	for {
		r.mu.Lock()
		done := !r.visibleAt.IsZero() && !r.indexedAt.IsZero()
		r.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	r.halt()
	return !r.visibleAt.IsZero()
}

// halt stops the readers and waits for them (once; wait and the test's
// cleanup both call it).
func (r *parentReads) halt() {
	r.stopOnce.Do(func() { close(r.stop) })
	r.wg.Wait()
}

// check fails t for every early answer, every answer that was a part of
// the change (what names it), and a reader that never saw both sides.
func (r *parentReads) check(t *testing.T, what string) {
	t.Helper()
	for _, e := range r.early {
		t.Error(e)
	}
	for name, counts := range r.seen {
		for n, times := range counts {
			if n != 0 && n != r.want {
				t.Errorf("%s answered %d of the %d objects (%d times): a part of the %s", name, n, r.want, times, what)
			}
		}
		if counts[0] == 0 || counts[r.want] == 0 {
			t.Errorf("%s was not read both before and after the %s: %v", name, what, counts)
		}
	}
}
