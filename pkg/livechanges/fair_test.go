package livechanges_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/fairshare"
	"github.com/cmsplatform/cms/pkg/livechanges"
)

// One user cannot hold all the subscriptions (Reliability II item 5):
// beyond MaxSubscribersPerUser it gets a LimitError (429) naming the
// cap while other users still subscribe, administrators keep their
// reserve, and a closed subscription frees its slot.
func TestSubscribersPerUser(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		idx.set(1)
		h := startHub(t, bus, idx, livechanges.Config{MaxSubscribers: 10, MaxSubscribersPerUser: 3, AdminReserve: 2})
		as := func(name string, admin bool) context.Context {
			return auth.WithPrincipal(t.Context(), auth.Principal{Name: name, Admin: admin})
		}
		var mine []*livechanges.Subscription
		for range 3 {
			s, err := h.Subscribe(as("greedy", false), livechanges.Filter{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			mine = append(mine, s)
		}
		var le *fairshare.LimitError
		for range 20 {
			_, err := h.Subscribe(as("greedy", false), livechanges.Filter{}, 0)
			if !errors.As(err, &le) || !errors.Is(err, errkind.TooMany) || le.Cap != livechanges.CapSubscribersPerUser {
				t.Fatalf("greedy's 4th subscription: %v, want a LimitError", err)
			}
		}
		for _, u := range []string{"a", "b"} {
			for range 2 {
				if _, err := h.Subscribe(as(u, false), livechanges.Filter{}, 0); err != nil {
					t.Fatalf("%s: %v", u, err)
				}
			}
		}
		// 7 of the 8 shared slots are taken; one more user fills them.
		if _, err := h.Subscribe(as("c", false), livechanges.Filter{}, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Subscribe(as("d", false), livechanges.Filter{}, 0); !errors.Is(err, livechanges.ErrTooManySubscribers) {
			t.Fatalf("beyond the shared slots: %v, want ErrTooManySubscribers", err)
		}
		for range 2 {
			if _, err := h.Subscribe(as("root", true), livechanges.Filter{}, 0); err != nil {
				t.Fatalf("admin in the reserve: %v", err)
			}
		}
		mine[0].Close()
		if _, err := h.Subscribe(as("d", false), livechanges.Filter{}, 0); err != nil {
			t.Fatalf("after greedy closed one: %v", err)
		}
		if st := h.Stats(); st.Subscribers != 10 {
			t.Errorf("subscribers %d, want 10", st.Subscribers)
		}
	})
}
