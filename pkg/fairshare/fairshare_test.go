package fairshare

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/errkind"
)

// One user holds at most PerUser slots (429 kind), other users together
// at most Total−AdminReserve (ErrBusy), and administrators take the
// reserve; a release frees the slot once.
func TestShares(t *testing.T) {
	f := New("things", Limits{Total: 4, PerUser: 2, AdminReserve: 1, Cap: "thingsPerUser"})
	ctx := context.Background()
	a, b, c, admin := Caller{ID: "a"}, Caller{ID: "b"}, Caller{ID: "c"}, Caller{ID: "root", Admin: true}
	var releases []func()
	take := func(who Caller) error {
		r, err := f.Acquire(ctx, who)
		if err == nil {
			releases = append(releases, r)
		}
		return err
	}
	for range 2 {
		if err := take(a); err != nil {
			t.Fatal(err)
		}
	}
	var le *LimitError
	if err := take(a); !errors.As(err, &le) || !errors.Is(err, errkind.TooMany) || le.Cap != "thingsPerUser" || le.Limit != 2 {
		t.Fatalf("a's third slot: %v, want a LimitError naming thingsPerUser", err)
	}
	if err := take(b); err != nil {
		t.Fatalf("b: %v", err)
	}
	if err := take(c); !errors.Is(err, ErrBusy) {
		t.Fatalf("c with the shared slots in use: %v, want ErrBusy", err)
	}
	if err := take(admin); err != nil {
		t.Fatalf("admin takes the reserve: %v", err)
	}
	if f.InUse() != 4 || f.Held(a) != 2 {
		t.Fatalf("in use %d, a holds %d", f.InUse(), f.Held(a))
	}
	releases[0]()
	releases[0]() // harmless
	if f.InUse() != 3 || f.Held(a) != 1 {
		t.Fatalf("after one release: in use %d, a holds %d", f.InUse(), f.Held(a))
	}
	if err := take(c); err != nil {
		t.Fatalf("c after a release: %v", err)
	}
	// Administrators are bounded by Total only.
	g := New("things", Limits{Total: 3, PerUser: 1})
	for range 3 {
		if _, err := g.Acquire(ctx, admin); err != nil {
			t.Fatalf("admin beyond PerUser: %v", err)
		}
	}
}

// With Wait, Acquire waits for a release (and no longer than Wait).
func TestWait(t *testing.T) {
	f := New("things", Limits{Total: 1, Wait: 5 * time.Second})
	ctx := context.Background()
	r, err := f.Acquire(ctx, Caller{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r2, err := f.Acquire(ctx, Caller{ID: "b"})
		if err == nil {
			r2()
		}
		got <- err
	}()
	r()
	if err := <-got; err != nil {
		t.Fatalf("waiting acquire: %v", err)
	}
	short := New("things", Limits{Total: 1, Wait: 20 * time.Millisecond})
	if _, err := short.Acquire(ctx, Caller{}); err != nil {
		t.Fatal(err)
	}
	if _, err := short.Acquire(ctx, Caller{ID: "x"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("after Wait: %v, want ErrBusy", err)
	}
}

func TestCallerFrom(t *testing.T) {
	if c := CallerFrom(context.Background()); c != (Caller{}) {
		t.Fatalf("anonymous: %+v", c)
	}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Name: "ann", Admin: true})
	if c := CallerFrom(ctx); c != (Caller{ID: "ann", Admin: true}) {
		t.Fatalf("principal: %+v", c)
	}
}

func TestReserveOr(t *testing.T) {
	for _, c := range []struct{ v, def, want int }{{0, 4, 4}, {-1, 4, 0}, {2, 4, 2}, {0, 0, 0}} {
		if got := ReserveOr(c.v, c.def); got != c.want {
			t.Errorf("ReserveOr(%d, %d) = %d, want %d", c.v, c.def, got, c.want)
		}
	}
}
