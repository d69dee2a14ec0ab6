package bleve

import "hash/maphash"

// idTable finds the slot of a document id in about 6 bytes a document (a
// Go map of id strings to slots takes about 35): open addressing with
// linear probing over slot numbers, the ids being those of columns.ids.
type idTable struct {
	seed maphash.Seed
	// tab holds slot+1 per entry (0: free); its length is a power of two
	// and at most two thirds of it are taken.
	tab []int32
	n   int
}

func (t *idTable) home(id string) int {
	return int(maphash.String(t.seed, id) & uint64(len(t.tab)-1))
}

// get returns the slot of id; ids are the ids of the slots.
func (t *idTable) get(ids []string, id string) (int32, bool) {
	if len(t.tab) == 0 {
		return 0, false
	}
	mask := len(t.tab) - 1
	for i := t.home(id); t.tab[i] != 0; i = (i + 1) & mask {
		if s := t.tab[i] - 1; ids[s] == id {
			return s, true
		}
	}
	return 0, false
}

// add records slot s, for the id ids[s] that get does not find.
func (t *idTable) add(ids []string, s int32) {
	if 3*(t.n+1) > 2*len(t.tab) {
		old := t.tab
		if len(old) == 0 {
			t.seed = maphash.MakeSeed()
		}
		t.tab = make([]int32, max(16, 2*len(old)))
		for _, e := range old {
			if e != 0 {
				t.insert(ids[e-1], e-1)
			}
		}
	}
	t.insert(ids[s], s)
	t.n++
}

func (t *idTable) insert(id string, s int32) {
	mask := len(t.tab) - 1
	i := t.home(id)
	for t.tab[i] != 0 {
		i = (i + 1) & mask
	}
	t.tab[i] = s + 1
}

// remove forgets id, whose slot still has it in ids. The entries after
// it that probed past it move back, so that get still finds them.
func (t *idTable) remove(ids []string, id string) {
	if len(t.tab) == 0 {
		return
	}
	mask := len(t.tab) - 1
	i := t.home(id)
	for ; t.tab[i] != 0 && ids[t.tab[i]-1] != id; i = (i + 1) & mask {
	}
	if t.tab[i] == 0 {
		return
	}
	for j := (i + 1) & mask; t.tab[j] != 0; j = (j + 1) & mask {
		// The entry at j may fill i unless its home is in (i, j].
		if h := t.home(ids[t.tab[j]-1]); (j-h)&mask >= (j-i)&mask {
			t.tab[i], i = t.tab[j], j
		}
	}
	t.tab[i] = 0
	t.n--
}
