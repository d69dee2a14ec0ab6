package bleve

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The id table finds what a map of ids to slots finds, through adds and
// removes in any order (removes that move the entries probing past them
// back among them), slots reused, and growth.
func TestIDTable(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	var tab idTable
	var ids []string
	var free []int32
	want := map[string]int32{}
	for step := range 20000 {
		id := fmt.Sprint(r.IntN(700))
		s, ok := tab.get(ids, id)
		if ws, wok := want[id]; ok != wok || s != ws {
			t.Fatalf("step %d: get %q = %d %v, want %d %v", step, id, s, ok, ws, wok)
		}
		switch {
		case ok && r.IntN(2) == 0:
			tab.remove(ids, id)
			ids[s] = ""
			free = append(free, s)
			delete(want, id)
		case !ok:
			if n := len(free); n > 0 && r.IntN(2) == 0 {
				s, free = free[n-1], free[:n-1]
				ids[s] = id
			} else {
				s = int32(len(ids))
				ids = append(ids, id)
			}
			tab.add(ids, s)
			want[id] = s
		}
		if tab.n != len(want) || 3*tab.n > 2*len(tab.tab) {
			t.Fatalf("step %d: %d entries in %d, want %d", step, tab.n, len(tab.tab), len(want))
		}
	}
	for id, s := range want {
		if got, ok := tab.get(ids, id); !ok || got != s {
			t.Fatalf("get %q = %d %v, want %d", id, got, ok, s)
		}
	}
}
