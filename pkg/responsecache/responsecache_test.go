package responsecache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// fixture is a response cache over a memory cache and a build that
// counts its runs.
type fixture struct {
	c       *Cache
	builds  atomic.Int64
	version atomic.Int64 // what the version function reports
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	m := memory.New(memory.Options{})
	t.Cleanup(func() { _ = m.Close() })
	return &fixture{c: New(m, nil)}
}

func (f *fixture) Version(context.Context) (int64, error) { return f.version.Load(), nil }

// serve serves req through the cache with a build answering body.
func (f *fixture) serve(ctx context.Context, req string, minVersion int64, body string, tags ...string) (*wrapperspb.StringValue, string, error) {
	return Serve(ctx, f.c, "Op", wrapperspb.String(req), minVersion, f, func(context.Context) (*wrapperspb.StringValue, []string, error) {
		f.builds.Add(1)
		return wrapperspb.String(body), tags, nil
	})
}

// TestServe: a miss builds and stores, a hit answers the stored body with
// the same ETag, a caller needing a newer version than the entry was
// built at rebuilds, and the ETag follows the body.
func TestServe(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.version.Store(5)
	first, tag, err := f.serve(ctx, "a", 0, "one", "t1")
	if err != nil || first.Value != "one" || tag == "" || f.builds.Load() != 1 {
		t.Fatalf("miss: %v %q %v, %d builds", first, tag, err, f.builds.Load())
	}
	again, tag2, err := f.serve(ctx, "a", 5, "other", "t1")
	if err != nil || again.Value != "one" || tag2 != tag || f.builds.Load() != 1 {
		t.Fatalf("hit: %v %q (want %q) %v, %d builds", again, tag2, tag, err, f.builds.Load())
	}
	if st := f.c.Stats(); st.Hits != 1 || st.Misses != 1 {
		t.Errorf("stats %+v", st)
	}
	newer, tag3, err := f.serve(ctx, "a", 6, "two", "t1")
	if err != nil || newer.Value != "two" || tag3 == tag || f.builds.Load() != 2 {
		t.Fatalf("min version above the entry: %v %q %v, %d builds", newer, tag3, err, f.builds.Load())
	}
	if _, _, err := f.serve(ctx, "b", 0, "one", "t1"); err != nil || f.builds.Load() != 3 {
		t.Fatalf("another request shared an entry: %v, %d builds", err, f.builds.Load())
	}
}

// TestStaleBuildIsNotStored: an answer rendered from index data older
// than an invalidation of one of its tags is not cached (the race between
// rendering and eviction); one with untouched tags is.
func TestStaleBuildIsNotStored(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.version.Store(5)
	if err := f.c.Storage().InvalidateTagsAt(ctx, 6, "touched"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := f.serve(ctx, "stale", 0, "old", "touched", "other"); err != nil {
			t.Fatal(err)
		}
	}
	if f.builds.Load() != 2 {
		t.Fatalf("an answer built at 5 was stored after an invalidation at 6 (%d builds)", f.builds.Load())
	}
	for range 2 {
		if _, _, err := f.serve(ctx, "fresh", 0, "old", "other"); err != nil {
			t.Fatal(err)
		}
	}
	if f.builds.Load() != 3 {
		t.Fatalf("an answer with untouched tags was refused (%d builds)", f.builds.Load()-2)
	}
}

// waitJoined blocks until n callers are attached to flights of c (it
// gives up after a minute, a bound for a broken build, not a timing).
func waitJoined(t *testing.T, c *Cache, n int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); c.flights.joined.Load() < n; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d callers reached the cache", c.flights.joined.Load(), n)
		}
	}
}

// TestConcurrentMissesBuildOnce: n identical misses at the same time run
// one build; every caller gets its answer and ETag.
func TestConcurrentMissesBuildOnce(t *testing.T) {
	const n = 16
	f := newFixture(t)
	release := make(chan struct{})
	build := func(context.Context) (*wrapperspb.StringValue, []string, error) {
		f.builds.Add(1)
		<-release // until every caller is attached to this build
		return wrapperspb.String("answer"), []string{"t"}, nil
	}
	var wg sync.WaitGroup
	tags := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			out, tag, err := Serve(context.Background(), f.c, "Op", wrapperspb.String("same"), 0, f, build)
			if err == nil && out.Value != "answer" {
				err = fmt.Errorf("answer %q", out.Value)
			}
			tags[i], errs[i] = tag, err
		})
	}
	waitJoined(t, f.c, n)
	close(release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || tags[i] != tags[0] {
			t.Errorf("caller %d: %q %v (first %q)", i, tags[i], errs[i], tags[0])
		}
	}
	if got := f.builds.Load(); got != 1 {
		t.Fatalf("%d identical concurrent misses ran %d builds, want 1", n, got)
	}
	if st := f.c.Stats(); st.Misses != n || st.Shared != n-1 {
		t.Errorf("stats %+v, want %d misses, %d shared", st, n, n-1)
	}
}

// TestFailedBuildIsNotKept: the error of a build reaches the callers that
// waited for it, is not stored, and the next caller builds again.
func TestFailedBuildIsNotKept(t *testing.T) {
	const n = 4
	f := newFixture(t)
	boom := errors.New("boom")
	release := make(chan struct{})
	failing := func(context.Context) (*wrapperspb.StringValue, []string, error) {
		f.builds.Add(1)
		<-release
		return nil, nil, boom
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = Serve(context.Background(), f.c, "Op", wrapperspb.String("same"), 0, f, failing)
		})
	}
	waitJoined(t, f.c, n)
	close(release)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d: %v, want the build's error", i, err)
		}
	}
	if f.builds.Load() != 1 {
		t.Fatalf("%d builds for %d concurrent misses", f.builds.Load(), n)
	}
	out, _, err := f.serve(context.Background(), "same", 0, "ok")
	if err != nil || out.Value != "ok" || f.builds.Load() != 2 {
		t.Fatalf("after a failed build: %v %v, %d builds (want a new build)", out, err, f.builds.Load())
	}
}

// TestLeaderCancelDoesNotFailFollowers: when the caller whose build the
// others wait for goes away and its build fails with its context, the
// others build again and succeed.
func TestLeaderCancelDoesNotFailFollowers(t *testing.T) {
	const followers = 4
	f := newFixture(t)
	leaderCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := wrapperspb.String("same")
	leaderDone := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		_, _, err := Serve(leaderCtx, f.c, "Op", req, 0, f, func(context.Context) (*wrapperspb.StringValue, []string, error) {
			f.builds.Add(1)
			close(started)
			<-leaderCtx.Done()
			return nil, nil, leaderCtx.Err()
		})
		leaderDone <- err
	}()
	<-started
	var wg sync.WaitGroup
	errs := make([]error, followers)
	for i := range followers {
		wg.Go(func() {
			var out *wrapperspb.StringValue
			out, _, errs[i] = f.serve(context.Background(), "same", 0, "answer")
			if errs[i] == nil && out.Value != "answer" {
				errs[i] = fmt.Errorf("answer %q", out.Value)
			}
		})
	}
	waitJoined(t, f.c, followers+1)
	cancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v, want its own cancellation", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("follower %d failed with its leader: %v", i, err)
		}
	}
	if f.builds.Load() < 2 {
		t.Errorf("%d builds: the followers did not build again", f.builds.Load())
	}
}

// TestPanickingBuild: a build that panics panics in its leader's
// goroutine; the callers waiting for it get ErrBuildPanicked, and the key
// is free again.
func TestPanickingBuild(t *testing.T) {
	const followers = 3
	f := newFixture(t)
	release := make(chan struct{})
	leaderPanic := make(chan any, 1)
	go func() {
		defer func() { leaderPanic <- recover() }()
		_, _, _ = Serve(context.Background(), f.c, "Op", wrapperspb.String("same"), 0, f, func(context.Context) (*wrapperspb.StringValue, []string, error) {
			<-release
			panic("boom")
		})
	}()
	waitJoined(t, f.c, 1)
	var wg sync.WaitGroup
	errs := make([]error, followers)
	for i := range followers {
		wg.Go(func() { _, _, errs[i] = f.serve(context.Background(), "same", 0, "answer") })
	}
	waitJoined(t, f.c, followers+1)
	close(release)
	wg.Wait()
	if p := <-leaderPanic; p != "boom" {
		t.Errorf("leader recovered %v, want its build's panic", p)
	}
	for i, err := range errs {
		if !errors.Is(err, ErrBuildPanicked) {
			t.Errorf("follower %d: %v, want ErrBuildPanicked", i, err)
		}
	}
	if out, _, err := f.serve(context.Background(), "same", 0, "answer"); err != nil || out.Value != "answer" {
		t.Fatalf("after the panic: %v %v", out, err)
	}
}

// BenchmarkServeHit: a cached answer from the memory cache (key, lookup,
// decoding), the path every repeated gRPC read takes.
func BenchmarkServeHit(b *testing.B) {
	m := memory.New(memory.Options{})
	defer m.Close()
	f := &fixture{c: New(m, nil)}
	ctx := context.Background()
	req := wrapperspb.String("same")
	build := func(context.Context) (*wrapperspb.StringValue, []string, error) {
		return wrapperspb.String("answer"), []string{"t"}, nil
	}
	if _, _, err := Serve(ctx, f.c, "Op", req, 0, f, build); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := Serve(ctx, f.c, "Op", req, 0, f, build); err != nil {
			b.Fatal(err)
		}
	}
}

// TestServeWithRun: a miss (its version read and its build) runs with the
// cache's run, in the context run gives it; a hit does not run; a cache
// without storage runs every build.
func TestServeWithRun(t *testing.T) {
	type runKey struct{}
	for _, stored := range []bool{true, false} {
		f := newFixture(t)
		if !stored {
			f.c = New(nil, nil)
		}
		var runs atomic.Int64
		f.c.WithRun(func(ctx context.Context, fn func(context.Context)) {
			runs.Add(1)
			fn(context.WithValue(ctx, runKey{}, "run"))
		})
		build := func(ctx context.Context) (*wrapperspb.StringValue, []string, error) {
			if ctx.Value(runKey{}) != "run" {
				return nil, nil, errors.New("built outside run")
			}
			return wrapperspb.String("one"), nil, nil
		}
		for i := range 2 {
			if _, _, err := Serve(context.Background(), f.c, "Op", wrapperspb.String("a"), 0, f, build); err != nil {
				t.Fatalf("stored %v, read %d: %v", stored, i, err)
			}
		}
		if want := map[bool]int64{true: 1, false: 2}[stored]; runs.Load() != want {
			t.Errorf("stored %v: %d runs for a miss and a second read, want %d", stored, runs.Load(), want)
		}
	}
}

// TestUnstoredAnswersKeepTheirETag: without storage, an answer carrying
// only unknown fields (the wire JSON of the gateway's answers) is hashed
// from those bytes without encoding it again; its ETag is the one a
// storing cache gives the same answer, as for an answer with fields, and
// callers sharing its build get the same bytes.
func TestUnstoredAnswersKeepTheirETag(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	wire := func(s string) *wrapperspb.StringValue {
		m := &wrapperspb.StringValue{}
		m.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, protowire.MaxValidNumber, protowire.BytesType), []byte(s)))
		return m
	}
	for _, answer := range []*wrapperspb.StringValue{wire(`{"obj":1}`), wrapperspb.String("fields"), wire(""), {}} {
		build := func(context.Context) (*wrapperspb.StringValue, []string, error) {
			return answer, []string{"t"}, nil
		}
		req := wrapperspb.String(fmt.Sprint(answer))
		_, stored, err := Serve(ctx, f.c, "Op", req, 0, f, build)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		slow := func(ctx context.Context) (*wrapperspb.StringValue, []string, error) {
			<-release
			return build(ctx)
		}
		none := New(nil, nil)
		const n = 4
		var wg sync.WaitGroup
		outs, tags := make([]*wrapperspb.StringValue, n), make([]string, n)
		for i := range n {
			wg.Go(func() {
				var err error
				if outs[i], tags[i], err = Serve(ctx, none, "Op", req, 0, f, slow); err != nil {
					t.Error(err)
				}
			})
		}
		waitJoined(t, none, n)
		close(release)
		wg.Wait()
		for i := range n {
			if tags[i] != stored || !proto.Equal(outs[i], answer) || string(outs[i].ProtoReflect().GetUnknown()) != string(answer.ProtoReflect().GetUnknown()) {
				t.Errorf("%v: caller %d without storage: %v %q, stored ETag %q", answer, i, outs[i], tags[i], stored)
			}
		}
	}
}
