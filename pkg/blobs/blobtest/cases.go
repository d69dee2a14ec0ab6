package blobtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
)

func testRoundTrip(t *testing.T, s blobs.Store) {
	start := time.Now()
	for _, tc := range []struct {
		key  string
		data []byte
		ct   string
	}{
		{"small.txt", []byte("hello, world"), "text/plain; charset=utf-8"},
		{"empty", nil, ""},
		{"files/2024/big.bin", randBytes(t, 5<<20), "application/octet-stream"},
		{"unicode/é ü.txt", []byte("ä"), "text/plain"},
	} {
		info := put(t, s, tc.key, tc.data, tc.ct)
		want := blobs.Info{Key: tc.key, Size: int64(len(tc.data)), SHA256: sum(tc.data), ContentType: tc.ct, Modified: start}
		sameInfo(t, "Put info", info, want)
		got := get(t, s, tc.key, tc.data)
		sameInfo(t, "Get info", got, info)
	}
}

func testRange(t *testing.T, s blobs.Store) {
	data := randBytes(t, 300_000) // several chunks in the object store
	size := int64(len(data))
	put(t, s, "r", data, "application/pdf")
	for _, tc := range []struct{ off, n, wantN int64 }{
		{0, 10, 10},
		{100, 1000, 1000},
		{130_000, 200_000, 170_000}, // crosses chunk boundaries, clipped at the end
		{size - 5, 100, 5},
		{size - 1, 1, 1},
		{200_000, -1, size - 200_000},
		{0, -1, size},
		{size, 10, 0},
		{5, 0, 0},
	} {
		rc, info, err := s.GetRange(ctxTimeout(t), "r", tc.off, tc.n)
		if err != nil {
			t.Fatalf("GetRange(%d, %d): %v", tc.off, tc.n, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("GetRange(%d, %d) read: %v", tc.off, tc.n, err)
		}
		if want := data[tc.off : tc.off+tc.wantN]; !bytes.Equal(got, want) {
			t.Errorf("GetRange(%d, %d) = %d bytes, want %d bytes of [%d:]", tc.off, tc.n, len(got), len(want), tc.off)
		}
		if info.Size != size || info.ContentType != "application/pdf" || info.SHA256 != sum(data) {
			t.Errorf("GetRange(%d, %d) info = %+v, want the whole blob's", tc.off, tc.n, info)
		}
	}
	for _, tc := range []struct{ off, n int64 }{{size + 1, 1}, {-1, 5}, {size + 1000, -1}} {
		rc, _, err := s.GetRange(ctxTimeout(t), "r", tc.off, tc.n)
		if err == nil {
			rc.Close()
		}
		wantErr(t, fmt.Sprintf("GetRange(%d, %d)", tc.off, tc.n), err, blobs.ErrInvalidRange)
	}
}

func testStat(t *testing.T, s blobs.Store) {
	data := randBytes(t, 1000)
	info := put(t, s, "dir/x.png", data, "image/png")
	got, err := s.Stat(t.Context(), "dir/x.png")
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	sameInfo(t, "Stat", got, info)
	if got.SHA256 != sum(data) || got.Size != 1000 {
		t.Errorf("Stat = %+v, want size 1000 sha %s", got, sum(data))
	}
}

func testOverwrite(t *testing.T, s blobs.Store) {
	put(t, s, "k", randBytes(t, 200_000), "image/jpeg")
	v2 := []byte("second version")
	info := put(t, s, "k", v2, "text/plain")
	get(t, s, "k", v2)
	st, err := s.Stat(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	sameInfo(t, "Stat after overwrite", st, info)
	if st.ContentType != "text/plain" {
		t.Errorf("ContentType after overwrite = %q", st.ContentType)
	}
	// Overwriting with an empty content type clears it.
	put(t, s, "k", v2, "")
	if st, err := s.Stat(t.Context(), "k"); err != nil || st.ContentType != "" {
		t.Errorf("Stat after overwrite without content type = %+v, %v", st, err)
	}
}

func testDelete(t *testing.T, s blobs.Store) {
	ctx := t.Context()
	put(t, s, "d/1", []byte("x"), "")
	put(t, s, "d/2", []byte("y"), "")
	if err := s.Delete(ctx, "d/1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Stat(ctx, "d/1")
	wantErr(t, "Stat after Delete", err, blobs.ErrNotFound)
	_, _, err = s.Get(ctx, "d/1")
	wantErr(t, "Get after Delete", err, blobs.ErrNotFound)
	if err := s.Delete(ctx, "d/1"); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
	if err := s.Delete(ctx, "never/existed"); err != nil {
		t.Errorf("Delete of a missing key = %v, want nil", err)
	}
	get(t, s, "d/2", []byte("y")) // a sibling is untouched
	put(t, s, "d/1", []byte("again"), "")
	get(t, s, "d/1", []byte("again"))
}

func testNotFound(t *testing.T, s blobs.Store) {
	ctx := t.Context()
	_, err := s.Stat(ctx, "missing")
	wantErr(t, "Stat", err, blobs.ErrNotFound)
	_, _, err = s.Get(ctx, "missing")
	wantErr(t, "Get", err, blobs.ErrNotFound)
	_, _, err = s.GetRange(ctx, "missing/x", 0, 1)
	wantErr(t, "GetRange", err, blobs.ErrNotFound)
}

func testInvalidKeys(t *testing.T, s blobs.Store) {
	ctx := t.Context()
	for _, k := range []string{"", "/abs", "../escape", "a/../../b", "a/./b", `a\b`, "a\x00b", "a//b", "a/", strings.Repeat("k", blobs.MaxKeyLen+1)} {
		_, err := s.Put(ctx, k, strings.NewReader("x"), blobs.Meta{})
		wantErr(t, fmt.Sprintf("Put(%q)", k), err, blobs.ErrInvalidKey)
		_, _, err = s.Get(ctx, k)
		wantErr(t, fmt.Sprintf("Get(%q)", k), err, blobs.ErrInvalidKey)
		_, _, err = s.GetRange(ctx, k, 0, 1)
		wantErr(t, fmt.Sprintf("GetRange(%q)", k), err, blobs.ErrInvalidKey)
		_, err = s.Stat(ctx, k)
		wantErr(t, fmt.Sprintf("Stat(%q)", k), err, blobs.ErrInvalidKey)
		err = s.Delete(ctx, k)
		wantErr(t, fmt.Sprintf("Delete(%q)", k), err, blobs.ErrInvalidKey)
	}
}

func testNestedKeys(t *testing.T, s blobs.Store) {
	keys := []string{"a", "a/b", "a/b/c", "A", "a.meta", strings.Repeat("k", blobs.MaxKeyLen)}
	for _, k := range keys {
		put(t, s, k, []byte("content of "+k), "")
	}
	for _, k := range keys {
		get(t, s, k, []byte("content of "+k))
	}
	if err := s.Delete(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	get(t, s, "a/b", []byte("content of a/b"))
}

func testFailedPut(t *testing.T, s blobs.Store) {
	ctx := t.Context()
	old := []byte("the old version")
	put(t, s, "f", old, "text/plain")
	_, err := s.Put(ctx, "f", &failingReader{bytes.NewReader(randBytes(t, 400_000))}, blobs.Meta{})
	wantErr(t, "Put with failing reader", err, errReader)
	info := get(t, s, "f", old)
	if info.ContentType != "text/plain" {
		t.Errorf("ContentType after failed put = %q", info.ContentType)
	}
	_, err = s.Put(ctx, "new", &failingReader{strings.NewReader("partial")}, blobs.Meta{})
	wantErr(t, "Put of new key with failing reader", err, errReader)
	_, err = s.Stat(ctx, "new")
	wantErr(t, "Stat after failed put", err, blobs.ErrNotFound)
}

func testConcurrent(t *testing.T, s blobs.Store) {
	const workers, perWorker = 8, 4
	data := make(map[string][]byte)
	for w := range workers {
		for i := range perWorker {
			data[fmt.Sprintf("c/%d/%d", w, i)] = randBytes(t, 1000*(w+1)*(i+1)+i)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				k := fmt.Sprintf("c/%d/%d", w, i)
				if _, err := s.Put(ctxTimeout(t), k, bytes.NewReader(data[k]), blobs.Meta{}); err != nil {
					errs <- fmt.Errorf("Put(%s): %w", k, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k, v := range data {
		get(t, s, k, v)
	}
}

func testWalk(t *testing.T, s blobs.Store) {
	ctx := t.Context()
	for _, k := range []string{"w/a", "w/b/c", "wx", "other"} {
		put(t, s, k, []byte("content of "+k), "text/plain")
	}
	if err := s.Delete(ctx, "w/a"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "w/d", nil, "")
	walk := func(prefix string) map[string]int64 {
		got := map[string]int64{}
		err := s.Walk(ctx, prefix, func(info blobs.Info) error {
			got[info.Key] = info.Size
			return nil
		})
		if err != nil {
			t.Fatalf("Walk(%q): %v", prefix, err)
		}
		return got
	}
	if got := walk("w/"); len(got) != 2 || got["w/b/c"] != int64(len("content of w/b/c")) || got["w/d"] != 0 {
		t.Errorf(`Walk("w/") = %v, want w/b/c and w/d`, got)
	}
	if got := walk(""); len(got) != 4 {
		t.Errorf(`Walk("") = %v, want 4 blobs`, got)
	}
	if got := walk("nothing/"); len(got) != 0 {
		t.Errorf(`Walk("nothing/") = %v, want none`, got)
	}
	stop := errors.New("stop")
	calls := 0
	err := s.Walk(ctx, "", func(blobs.Info) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk with a failing fn = %v after %d calls, want stop after 1", err, calls)
	}
}
