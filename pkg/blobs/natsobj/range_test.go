package natsobj_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
)

const cs = natsobj.ChunkSize

func randData(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func ctx30(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seeks records the seeks of a store.
type seeks struct {
	mu     sync.Mutex
	chunks []uint64
}

func (s *seeks) record(chunk, _ uint64) {
	s.mu.Lock()
	s.chunks = append(s.chunks, chunk)
	s.mu.Unlock()
}

func (s *seeks) take() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chunks
	s.chunks = nil
	return c
}

// checkRange reads GetRange(off, n) and compares it with data.
func checkRange(t *testing.T, s blobs.Store, key string, data []byte, off, n int64) {
	t.Helper()
	rc, info, err := s.GetRange(ctx30(t), key, off, n)
	if err != nil {
		t.Fatalf("GetRange(%d, %d): %v", off, n, err)
	}
	got, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("GetRange(%d, %d) read: %v", off, n, err)
	}
	end := int64(len(data))
	if n >= 0 && off+n < end {
		end = off + n
	}
	if !bytes.Equal(got, data[off:end]) {
		t.Fatalf("GetRange(%d, %d) = %d bytes, not the %d bytes of [%d:%d]", off, n, len(got), end-off, off, end)
	}
	if info.Size != int64(len(data)) {
		t.Fatalf("GetRange(%d, %d) info size %d, want %d", off, n, info.Size, len(data))
	}
}

// testRanges reads ranges of a blob of 10 chunks and a bit, seeking from
// the first chunk on: every range starting in chunk k > 0 seeks to k.
func testRanges(t *testing.T, js jetstream.JetStream) {
	s, _ := newStore(t, js)
	var rec seeks
	natsobj.SetSeekMin(s, 1, rec.record)
	data := randData(t, 10*cs+1234)
	size := int64(len(data))
	if _, err := s.Put(ctx30(t), "r", bytes.NewReader(data), blobs.Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		off, n int64
	}{
		{"start", 0, 100},
		{"in the first chunk", 1000, cs},
		{"middle", 5*cs + 17, 3 * cs},
		{"crossing a boundary", 3*cs - 5, 10},
		{"one whole chunk", 4 * cs, cs},
		{"ending at a boundary", 2*cs + 9, cs - 9},
		{"last chunk", 10 * cs, -1},
		{"end", size - 100, -1},
		{"end, length past it", size - 100, 1000},
		{"last byte", size - 1, 1},
		{"empty in the middle", 6 * cs, 0},
		{"whole", 0, -1},
		{"empty at size", size, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRange(t, s, "r", data, tc.off, tc.n)
			var want []uint64
			if k := uint64(tc.off) / cs; k > 0 && tc.off < size {
				want = []uint64{k}
			}
			if got := rec.take(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("seeks %v, want %v", got, want)
			}
		})
	}
}

// testSeekThreshold checks the default: a range 64 chunks (8 MiB) or more
// into a blob seeks, one less reads through.
func testSeekThreshold(t *testing.T, js jetstream.JetStream) {
	s, _ := newStore(t, js)
	var rec seeks
	natsobj.SetSeekMin(s, 64, rec.record) // the default, with the hook
	data := randData(t, 70*cs+5)
	if _, err := s.Put(ctx30(t), "big", bytes.NewReader(data), blobs.Meta{}); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, "big", data, 64*cs-1, 10)
	if got := rec.take(); len(got) != 0 {
		t.Errorf("seeks %v before chunk 64", got)
	}
	checkRange(t, s, "big", data, 69*cs+3, -1)
	if got := rec.take(); fmt.Sprint(got) != "[69]" {
		t.Errorf("seeks %v, want [69]", got)
	}
}

// lockstep gives readers that take turns, each Read returning at most
// 50,000 bytes (less than a chunk), so that blobs put concurrently from
// them have their chunks interleaved in the stream.
type lockstep struct {
	turn  []chan struct{}
	datas [][]byte
	done  []bool // reader returned io.EOF
}

type turnReader struct {
	l *lockstep
	i int
}

func (r *turnReader) Read(p []byte) (int, error) {
	l := r.l
	<-l.turn[r.i]
	next := func() {
		for j := 1; j <= len(l.turn); j++ {
			k := (r.i + j) % len(l.turn)
			if !l.done[k] {
				l.turn[k] <- struct{}{}
				return
			}
		}
	}
	d := l.datas[r.i]
	if len(d) == 0 {
		l.done[r.i] = true
		next()
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 50_000)], d)
	l.datas[r.i] = d[n:]
	next()
	return n, nil
}

// testInterleaved puts blobs concurrently so that their chunks interleave
// in the stream (the test checks they do), then reads a range from every
// chunk of each: the chunk's sequence is found by binary search.
func testInterleaved(t *testing.T, js jetstream.JetStream) {
	s, bucket := newStore(t, js)
	var rec seeks
	natsobj.SetSeekMin(s, 1, rec.record)
	const blobsN = 3
	l := &lockstep{}
	var datas [blobsN][]byte
	for i := range blobsN {
		datas[i] = randData(t, (12+i)*cs+100*i+1)
		l.turn = append(l.turn, make(chan struct{}, 1))
		l.datas = append(l.datas, datas[i])
		l.done = append(l.done, false)
	}
	l.turn[0] <- struct{}{}
	var wg sync.WaitGroup
	errs := make([]error, blobsN)
	for i := range blobsN {
		wg.Go(func() {
			_, errs[i] = s.Put(ctx30(t), fmt.Sprintf("i/%d", i), &turnReader{l, i}, blobs.Meta{})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	obs, err := js.ObjectStore(ctx30(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx30(t), "OBJ_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	for i, data := range datas {
		key := fmt.Sprintf("i/%d", i)
		oi, err := obs.GetInfo(ctx30(t), key)
		if err != nil {
			t.Fatal(err)
		}
		subj := "$O." + bucket + ".C." + oi.NUID
		first, err := stream.GetMsg(ctx30(t), 1, jetstream.WithGetMsgSubject(subj))
		if err != nil {
			t.Fatal(err)
		}
		last, err := stream.GetLastMsgForSubject(ctx30(t), subj)
		if err != nil {
			t.Fatal(err)
		}
		if span := last.Sequence - first.Sequence + 1; span == uint64(oi.Chunks) {
			t.Fatalf("%s: its %d chunks are consecutive in the stream, want them interleaved", key, oi.Chunks)
		}
		for k := int64(1); k*cs < int64(len(data)); k++ {
			checkRange(t, s, key, data, k*cs+min(k, int64(len(data))-k*cs-1), cs)
			if got := rec.take(); fmt.Sprint(got) != fmt.Sprint([]int64{k}) {
				t.Fatalf("%s chunk %d: seeks %v", key, k, got)
			}
		}
		checkRange(t, s, key, data, int64(len(data))-1, -1)
		checkRange(t, s, key, data, 0, -1)
		rec.take()
	}
}

// testOtherWriter reads ranges of an object another client wrote with
// chunks of varying size: it is read from its start, never seeking.
func testOtherWriter(t *testing.T, js jetstream.JetStream) {
	s, bucket := newStore(t, js)
	var rec seeks
	natsobj.SetSeekMin(s, 1, rec.record)
	obs, err := js.ObjectStore(ctx30(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	data := randData(t, 3*cs+777)
	l := &lockstep{turn: []chan struct{}{make(chan struct{}, 1)}, datas: [][]byte{data}, done: []bool{false}}
	l.turn[0] <- struct{}{}
	oi, err := obs.Put(ctx30(t), jetstream.ObjectMeta{Name: "other"}, &turnReader{l, 0})
	if err != nil {
		t.Fatal(err)
	}
	if oi.Chunks <= 4 {
		t.Fatalf("%d chunks, want short ones", oi.Chunks)
	}
	for _, off := range []int64{0, cs + 3, 3 * cs, int64(len(data)) - 1} {
		checkRange(t, s, "other", data, off, 2*cs)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("seeks %v in an object of varying chunks", got)
	}
}
