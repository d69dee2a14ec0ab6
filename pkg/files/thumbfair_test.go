package files_test

import (
	"context"
	"image/png"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/files"
)

// Requested sizes are snapped to the documented set: 40 distinct sizes
// of one image store at most len(ThumbnailSizes) derived images
// (Reliability II item 4), each at most its snapped size.
func TestThumbnailSizesSnapped(t *testing.T) {
	store, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := files.New(store, files.Options{})
	want := []int{64, 128, 256, 512, 1024, 2048}
	if got := svc.ThumbnailSizes(); !slices.Equal(got, want) {
		t.Fatalf("sizes %v, want %v", got, want)
	}
	capped := files.New(store, files.Options{Thumbnails: files.ThumbnailOptions{MaxSize: 300, DefaultSize: 100}})
	if got := capped.ThumbnailSizes(); !slices.Equal(got, []int{64, 128, 256, 300}) {
		t.Fatalf("sizes under a 300 px cap: %v", got)
	}
	for req, wantSize := range map[int64]int{0: 128, 1: 64, 64: 64, 65: 128, 257: 300, 300: 300} {
		if got, err := capped.ThumbnailSize(req); err != nil || got != wantSize {
			t.Errorf("size %d under a 300 px cap: %d, %v; want %d", req, got, err, wantSize)
		}
	}
	n := commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(600, 400, false)) }))
	for i := range 40 {
		size, err := svc.ThumbnailSize(int64(10 + i*37))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Thumbnail(t.Context(), n, size); err != nil {
			t.Fatal(err)
		}
	}
	stored := 0
	_ = store.Walk(t.Context(), "thumbnails/"+n.Hex()+"/", func(blobs.Info) error { stored++; return nil })
	if stored > len(want) {
		t.Fatalf("40 sizes stored %d thumbnails, want at most %d", stored, len(want))
	}
}

// slowStore delays writes of thumbnails of one file, so a generation
// takes long enough to queue others behind it.
type slowStore struct {
	blobs.Store
	prefix string
	skip   string
	mu     sync.Mutex
	done   int
}

func (s *slowStore) Put(ctx context.Context, key string, r io.Reader, meta blobs.Meta) (blobs.Info, error) {
	if s.prefix != "" && strings.HasPrefix(key, s.prefix) && !strings.HasPrefix(key, s.skip) {
		time.Sleep(50 * time.Millisecond)
		defer func() { s.mu.Lock(); s.done++; s.mu.Unlock() }()
	}
	return s.Store.Put(ctx, key, r, meta)
}

func (s *slowStore) generated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// One user asking for 40 sizes at once does not hold the thumbnailer
// up for another user (Reliability II item 4): the other user's
// thumbnail is generated in a slot of its own, while the first user's
// generations still wait for theirs.
func TestThumbnailFairness(t *testing.T) {
	store, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowStore{Store: store}
	svc := files.New(slow, files.Options{})
	noise := testImage(300, 300, false)
	for i := range noise.Pix {
		noise.Pix[i] = byte(rand.IntN(256))
	}
	// Three images of the hammering user (40 sizes each), one of the other.
	var hammered []files.Name
	for i := range 3 {
		noise.Pix[0] = byte(i)
		hammered = append(hammered, commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, noise) })))
	}
	other := commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(200, 100, false)) }))
	slow.prefix = "thumbnails/"
	slow.skip = "thumbnails/" + other.Hex() + "/"
	hammer := auth.WithPrincipal(t.Context(), auth.Principal{Name: "hammer"})
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, n := range hammered {
		for i := range 40 {
			wg.Go(func() {
				if _, err := svc.Thumbnail(hammer, n, 1+i*50); err != nil {
					t.Error(err)
				}
			})
		}
	}
	for deadline := time.Now().Add(10 * time.Second); slow.generated() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hammering user's first thumbnail never came")
		}
	}
	start, before := time.Now(), slow.generated()
	ctx := auth.WithPrincipal(t.Context(), auth.Principal{Name: "other"})
	if _, err := svc.Thumbnail(ctx, other, 100); err != nil {
		t.Fatal(err)
	}
	// The other user's generation starts at once, in the slot the
	// hammering user may not take: at most the one generation running
	// then ends meanwhile.
	if n := slow.generated() - before; n > 1 {
		t.Fatalf("the other user's thumbnail waited %v, for %d of the hammering user's generations", time.Since(start), n)
	}
}
