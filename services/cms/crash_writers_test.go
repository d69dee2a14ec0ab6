package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The writers of TestCrashKill9DuringParallelWrites and what they expect.

type opStatus int

const (
	opAcked    opStatus = iota // answered 2xx: must survive
	opUnknown                  // no answer (in flight at the kill): may or may not have committed
	opRejected                 // answered with an error: must not have committed
)

// crashOp is one Management write of one or two objects; each object gets
// its own value, written as its display name (attribute 1000, en-US) and
// as crashval, so a surface that shows either shows which write it has.
type crashOp struct {
	create bool
	ids    []int64 // the updated objects; of a create, the created ones once acknowledged
	vals   []string
	status opStatus
	tx     int64 // transaction of an acknowledged write
}

// crashWriter writes sequentially: it creates objects and updates the ones
// whose creation it saw acknowledged; no other writer touches them, so the
// order of its ops is the order of the writes of its objects.
type crashWriter struct {
	id             int
	typeID, attrID int64
	rng            *rand.Rand
	seq            int
	own            []int64
	ops            []crashOp
}

// next is a create of two objects (3 in 10, or while the writer owns fewer
// than two) or an update of one or two of its objects.
func (w *crashWriter) next() crashOp {
	w.seq++
	base := fmt.Sprintf("w%d-%d", w.id, w.seq)
	if len(w.own) < 2 || w.rng.IntN(10) < 3 {
		return crashOp{create: true, vals: []string{base + "a", base + "b"}}
	}
	op := crashOp{}
	for n := 1 + w.rng.IntN(2); len(op.ids) < n; {
		if id := w.own[w.rng.IntN(len(w.own))]; !slices.Contains(op.ids, id) {
			op.ids = append(op.ids, id)
			op.vals = append(op.vals, fmt.Sprintf("%s-%d", base, len(op.ids)))
		}
	}
	return op
}

func (w *crashWriter) body(op crashOp) string {
	objs := make([]string, len(op.vals))
	for i, v := range op.vals {
		meta := fmt.Sprintf(`"typeRef":%d`, w.typeID)
		if !op.create {
			meta = fmt.Sprintf(`"id":%d,`, op.ids[i]) + meta
		}
		objs[i] = `{"meta":{` + meta + `},"values":[` + value(1000, 201, v) + "," + value(w.attrID, 0, v) + "]}"
	}
	return `{"objects":[` + strings.Join(objs, ",") + "]}"
}

// run writes until stop is set, calling acked after each acknowledged write.
// A transport error before stop is a failure; after it, the write was in
// flight at the kill.
func (w *crashWriter) run(t *testing.T, c *http.Client, base string, stop *atomic.Bool, acked func()) {
	for !stop.Load() {
		op := w.next()
		method, want := http.MethodPost, http.StatusCreated
		if !op.create {
			method, want = http.MethodPatch, http.StatusOK
		}
		code, b, err := call(c, method, base+"/apis/cms/v1/branches/4/objects", w.body(op))
		var a writeAnswer
		switch {
		case err != nil:
			op.status = opUnknown
			if !stop.Load() {
				t.Errorf("writer %d: %s before the kill: %v", w.id, method, err)
			}
		case code == want:
			if err := json.Unmarshal(b, &a); err != nil || a.Transaction.ID == 0 || (op.create && len(a.CreatedObjectIDs) != len(op.vals)) {
				t.Errorf("writer %d: %s answer %s: %v", w.id, method, b, err)
				op.status = opUnknown
				break
			}
			op.status, op.tx = opAcked, a.Transaction.ID
			if op.create {
				op.ids = a.CreatedObjectIDs
				w.own = append(w.own, op.ids...)
			}
			acked()
		default:
			op.status = opRejected
			if code != http.StatusServiceUnavailable && code != http.StatusTooManyRequests {
				t.Errorf("writer %d: %s = %d: %s", w.id, method, code, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
		w.ops = append(w.ops, op)
	}
}

type roundStats struct {
	acked, unknown, rejected int
	elapsed                  time.Duration // first acknowledged write → kill
}

// runRound runs the writers against p and kills p once killAfter has
// passed since the round's first acknowledged write and at least
// crashMinAcked writes were acknowledged (at most 20s), or earlier when
// crashMaxAcked were: the indexer, starved while eight writers run,
// catches up with every write at the end, and that bounds its work.
func runRound(t *testing.T, p *cmsProc, ws []*crashWriter, killAfter time.Duration) roundStats {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(ws)}, Timeout: 20 * time.Second}
	defer c.CloseIdleConnections()
	before := make([]int, len(ws))
	for i, w := range ws {
		before[i] = len(w.ops)
	}
	var stop atomic.Bool
	var acked atomic.Int64
	var once sync.Once
	first := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			w.run(t, c, p.base, &stop, func() {
				acked.Add(1)
				once.Do(func() { close(first) })
			})
		})
	}
	limit := time.After(20 * time.Second)
	select {
	case <-first:
	case <-limit:
		t.Errorf("no write acknowledged within 20s")
	}
	start := time.Now()
	for n := acked.Load(); n < crashMaxAcked && (n < crashMinAcked || time.Since(start) < killAfter); n = acked.Load() {
		select {
		case <-limit:
			t.Errorf("%d writes acknowledged in 20s, want %d before the kill", n, crashMinAcked)
		case <-time.After(2 * time.Millisecond):
			continue
		}
		break
	}
	stop.Store(true)
	p.kill()
	st := roundStats{elapsed: time.Since(start)}
	wg.Wait()
	for i, w := range ws {
		for _, op := range w.ops[before[i]:] {
			switch op.status {
			case opAcked:
				st.acked++
			case opUnknown:
				st.unknown++
			default:
				st.rejected++
			}
		}
	}
	return st
}

// objExpect is what one object acknowledged as created must show.
type objExpect struct {
	last  string   // the last acknowledged value
	tx    int64    // its transaction
	later []string // values of unanswered writes after it, any of which may have committed
}

type crashExpect struct {
	objects                                              map[int64]*objExpect
	unknownCreates                                       [][]string      // values of creates that got no answer
	rejected                                             map[string]bool // values of writes answered with an error
	maxTx                                                int64           // highest acknowledged transaction
	acked, unknown, createdObjects, updates, rejectedOps int
}

func expectations(ws []*crashWriter) crashExpect {
	e := crashExpect{objects: map[int64]*objExpect{}, rejected: map[string]bool{}}
	for _, w := range ws {
		for _, op := range w.ops {
			switch op.status {
			case opAcked:
				e.acked++
				e.maxTx = max(e.maxTx, op.tx)
				if !op.create {
					e.updates++
				}
				for i, id := range op.ids {
					if op.create {
						e.objects[id] = &objExpect{last: op.vals[i], tx: op.tx}
						e.createdObjects++
					} else {
						x := e.objects[id]
						x.last, x.tx, x.later = op.vals[i], op.tx, nil
					}
				}
			case opUnknown:
				e.unknown++
				if op.create {
					e.unknownCreates = append(e.unknownCreates, op.vals)
				}
				for i, id := range op.ids {
					e.objects[id].later = append(e.objects[id].later, op.vals[i])
				}
			default:
				e.rejectedOps++
				for _, v := range op.vals {
					e.rejected[v] = true
				}
			}
		}
	}
	return e
}
