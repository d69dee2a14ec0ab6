package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

var (
	alice = Actor{Caller: &auth.Principal{Name: "alice"}}
	bob   = Actor{Caller: &auth.Principal{Name: "bob"}}
	admin = Actor{Caller: &auth.Principal{Name: "root", Admin: true}}
)

// commentFixture: a child branch of 4 and one article on 4 and one on the
// child (visible on the child only).
type commentFixture struct {
	child              int64
	onDefault, onChild int64
}

func newCommentFixture(t *testing.T, s *Service) commentFixture {
	t.Helper()
	sc := newSchema(t, s)
	b, _, err := s.CreateBranch(ctxBG, editor, []ValueInput{vin(AttrName, LanguageEnUS, "Child")})
	if err != nil {
		t.Fatal(err)
	}
	_, a := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}}))
	_, c := must2(t)(s.CreateObjects(ctxBG, id(b.ID), editor, []ObjectInput{{TypeID: sc.article}}))
	return commentFixture{child: b.ID, onDefault: a[0], onChild: c[0]}
}

// outboxEvent claims the outbox and returns the event of transaction txID.
func outboxEvent(t *testing.T, st store.Store, txID int64) (store.OutboxEvent, changes.Event) {
	t.Helper()
	evs, err := st.ClaimOutbox(ctxBG, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	if err := st.AckOutbox(ctxBG, ids); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.TxID == txID {
			var ce changes.Event
			if err := json.Unmarshal(e.Payload, &ce); err != nil {
				t.Fatalf("payload %q: %v", e.Payload, err)
			}
			return e, ce
		}
	}
	t.Fatalf("no outbox event for transaction %d among %d", txID, len(evs))
	return store.OutboxEvent{}, changes.Event{}
}

func TestCommentLifecycle(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		f := newCommentFixture(t, s)
		c, err := s.CreateComment(ctxBG, alice, f.child, f.onDefault, `<div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <span>@bob</span></p></div>`)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID <= 0 || c.Branch != f.child || c.ObjectID != f.onDefault || c.User != "alice" || c.Deleted ||
			c.Created.IsZero() || !c.Modified.Equal(c.Created) {
			t.Fatalf("created = %+v", c)
		}
		ev, ce := outboxEvent(t, st, c.LastTransaction)
		if ev.Subject != fmt.Sprintf("cms.changes.%d", f.child) || ev.MsgID != fmt.Sprintf("tx-%d", c.LastTransaction) ||
			ce.Kind != "comment" || ce.CommentID != c.ID || ce.Action != changes.CommentCreated || ce.Branch != f.child ||
			ce.Transaction != c.LastTransaction || fmt.Sprint(ce.ObjectIDs) != fmt.Sprint([]int64{f.onDefault}) {
			t.Fatalf("outbox event %+v payload %+v", ev, ce)
		}
		tr, err := st.GetTransaction(ctxBG, c.LastTransaction)
		if err != nil || tr.User != "alice" || tr.Branch != f.child {
			t.Fatalf("transaction record %+v, %v", tr, err)
		}
		got, err := s.GetComment(ctxBG, c.ID)
		if err != nil || got != c {
			t.Fatalf("GetComment = %+v, %v; want %+v", got, err, c)
		}

		// Only the author (any case) or an admin may change it.
		wantErr(t, s.UpdateComment(ctxBG, bob, c.ID, "<div>mine now</div>"), ErrForbidden, "update by another user")
		wantErr(t, s.DeleteComment(ctxBG, bob, c.ID), ErrForbidden, "delete by another user")
		wantErr(t, s.UpdateComment(ctxBG, Actor{}, c.ID, "<div>anon</div>"), ErrForbidden, "update without user")
		if err := s.UpdateComment(ctxBG, Actor{Caller: &auth.Principal{Name: "ALICE"}}, c.ID, "<div>edited</div>"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetComment(ctxBG, c.ID)
		if got.Body != "<div>edited</div>" || got.LastTransaction <= c.LastTransaction || !got.Created.Equal(c.Created) || got.User != "alice" {
			t.Fatalf("after update = %+v", got)
		}
		if ev, ce := outboxEvent(t, st, got.LastTransaction); ce.Action != changes.CommentUpdated || ce.CommentID != c.ID || ev.Subject != changes.Subject(f.child) {
			t.Fatalf("update event %+v %+v", ev, ce)
		}
		wantErr(t, s.UpdateComment(ctxBG, alice, c.ID, "<p>not a div</p>"), ErrInvalid, "update with a bad body")
		if err := s.DeleteComment(ctxBG, admin, c.ID); err != nil {
			t.Fatal(err)
		}
		del, _ := s.GetComment(ctxBG, c.ID)
		if !del.Deleted || del.Body != "<div>edited</div>" || del.LastTransaction <= got.LastTransaction {
			t.Fatalf("after delete = %+v", del)
		}
		if _, ce := outboxEvent(t, st, del.LastTransaction); ce.Action != changes.CommentDeleted || ce.Kind != changes.KindComment {
			t.Fatalf("delete event %+v", ce)
		}
		wantErr(t, s.UpdateComment(ctxBG, alice, c.ID, "<div>again</div>"), ErrNotFound, "update of a deleted comment")
		wantErr(t, s.DeleteComment(ctxBG, alice, c.ID), ErrNotFound, "delete of a deleted comment")
		last, _ := st.LastTransactionID(ctxBG)
		if last != del.LastTransaction {
			t.Fatalf("refused writes committed transactions: last %d, delete was %d", last, del.LastTransaction)
		}
		_, err = s.GetComment(ctxBG, c.ID+100)
		wantErr(t, err, ErrNotFound, "unknown comment")
		wantErr(t, s.UpdateComment(ctxBG, admin, c.ID+100, "<div/>"), ErrNotFound, "update unknown")
		wantErr(t, s.DeleteComment(ctxBG, admin, c.ID+100), ErrNotFound, "delete unknown")
	})
}

func TestCreateCommentChecks(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		f := newCommentFixture(t, s)
		before, _ := st.LastTransactionID(ctxBG)
		for _, tc := range []struct {
			name           string
			branch, object int64
			body           string
			want           error
		}{
			{"bad body", 4, f.onDefault, "<p>x</p>", ErrInvalid},
			{"script", 4, f.onDefault, "<div><script>alert(1)</script></div>", ErrInvalid},
			{"missing body", 4, f.onDefault, "", ErrInvalid},
			{"unknown branch", 999999, f.onDefault, "<div/>", ErrNotFound},
			{"branch 0", 0, f.onDefault, "<div/>", ErrNotFound},
			{"an object is not a branch", f.onDefault, f.onDefault, "<div/>", ErrNotFound},
			{"unknown object", 4, 999999, "<div/>", ErrNotFound},
			{"object of a child branch on the parent", 4, f.onChild, "<div/>", ErrNotFound},
		} {
			_, err := s.CreateComment(ctxBG, alice, tc.branch, tc.object, tc.body)
			wantErr(t, err, tc.want, tc.name)
		}
		if after, _ := st.LastTransactionID(ctxBG); after != before {
			t.Fatalf("refused creates committed transactions %d..%d", before, after)
		}
		// The child's object on the child, a system object on the child
		// (inherited from 4), and a deleted object (404).
		if _, err := s.CreateComment(ctxBG, alice, f.child, f.onChild, "<div/>"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateComment(ctxBG, alice, f.child, TypeBranch, "<div/>"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.DeleteObjects(ctxBG, id(f.child), editor, []string{id(f.onChild)}); err != nil {
			t.Fatal(err)
		}
		_, err := s.CreateComment(ctxBG, alice, f.child, f.onChild, "<div/>")
		wantErr(t, err, ErrNotFound, "comment on a deleted object")
	})
}

func TestGetCommentsFiltersAndPaging(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		f := newCommentFixture(t, s)
		type spec struct {
			who    Actor
			branch int64
			object int64
		}
		specs := []spec{
			{alice, 4, f.onDefault}, {bob, 4, f.onDefault}, {alice, f.child, f.onDefault},
			{bob, f.child, f.onChild}, {alice, f.child, f.onChild}, {Actor{Caller: &auth.Principal{Name: "Alice"}}, 4, f.onDefault},
			{bob, 4, f.onDefault},
		}
		var all []Comment
		for i, sp := range specs {
			c, err := s.CreateComment(ctxBG, sp.who, sp.branch, sp.object, fmt.Sprintf("<div>%d</div>", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		if err := s.DeleteComment(ctxBG, bob, all[1].ID); err != nil {
			t.Fatal(err)
		}
		all[1].Deleted = true
		want := func(keep func(i int, c Comment) bool) string {
			var out []int64
			for i := len(all) - 1; i >= 0; i-- {
				if keep(i, all[i]) {
					out = append(out, all[i].ID)
				}
			}
			return fmt.Sprint(out)
		}
		list := func(q CommentQuery) string {
			t.Helper()
			var out []int64
			for pages := 0; ; pages++ {
				p, err := s.GetComments(ctxBG, q)
				if err != nil {
					t.Fatalf("%+v: %v", q, err)
				}
				for _, c := range p.Comments {
					out = append(out, c.ID)
				}
				if p.Continue == "" {
					return fmt.Sprint(out)
				}
				if pages > 20 {
					t.Fatal("paging does not end")
				}
				q.Continue = p.Continue
			}
		}
		four, child, obj, yes, no := int64(4), f.child, f.onChild, true, false
		checks := []struct {
			name string
			q    CommentQuery
			keep func(i int, c Comment) bool
		}{
			{"all", CommentQuery{}, func(int, Comment) bool { return true }},
			{"all by 2", CommentQuery{Take: 2}, func(int, Comment) bool { return true }},
			{"branch 4", CommentQuery{Branch: &four, Take: 1}, func(_ int, c Comment) bool { return c.Branch == 4 }},
			{"object", CommentQuery{ObjectID: &obj}, func(_ int, c Comment) bool { return c.ObjectID == f.onChild }},
			{"user alice", CommentQuery{User: "alice", Take: 3}, func(i int, _ Comment) bool { return specs[i].who.Caller.Name != "bob" }},
			{"deleted", CommentQuery{Deleted: &yes}, func(_ int, c Comment) bool { return c.Deleted }},
			{"live bob on child", CommentQuery{Deleted: &no, User: "BOB", Branch: &child}, func(i int, c Comment) bool {
				return !c.Deleted && specs[i].who.Caller.Name == "bob" && c.Branch == f.child
			}},
		}
		for _, c := range checks {
			if got, w := list(c.q), want(c.keep); got != w {
				t.Errorf("%s: got %s, want %s", c.name, got, w)
			}
		}
		p, err := s.GetComments(ctxBG, CommentQuery{Take: 3})
		if err != nil || len(p.Comments) != 3 || p.Continue == "" || p.Comments[0].ID != all[len(all)-1].ID {
			t.Fatalf("first page = %+v, %v", p, err)
		}
		if p.Comments[0].Body == "" || p.Comments[0].Created.IsZero() {
			t.Fatalf("listed comment lacks fields: %+v", p.Comments[0])
		}
		_, err = s.GetComments(ctxBG, CommentQuery{Take: 3, Continue: p.Continue, User: "bob"})
		wantErr(t, err, ErrInvalid, "token of another list")
		_, err = s.GetComments(ctxBG, CommentQuery{Continue: "garbage!"})
		wantErr(t, err, ErrInvalid, "malformed token")
		_, err = s.GetComments(ctxBG, CommentQuery{Take: -1})
		wantErr(t, err, ErrInvalid, "negative take")
		missing := int64(999999)
		// An unknown branch has no comments (no ErrNotFound: a list tells
		// no branch that does not exist from one the caller may not read).
		if p, err := s.GetComments(ctxBG, CommentQuery{Branch: &missing}); err != nil || len(p.Comments) != 0 {
			t.Fatalf("unknown branch filter = %+v, %v: want no comments", p, err)
		}
		if p, err := s.GetComments(ctxBG, CommentQuery{User: "nobody"}); err != nil || len(p.Comments) != 0 || p.Continue != "" {
			t.Fatalf("no match = %+v, %v", p, err)
		}
	})
}

// failingOutbox makes AppendOutbox fail, to show that the comment and its
// event are written in one transaction.
type failingOutbox struct{ store.Store }

func (f failingOutbox) Begin(ctx context.Context, m store.TxMeta) (store.Tx, error) {
	tx, err := f.Store.Begin(ctx, m)
	return failingTx{tx}, err
}

type failingTx struct{ store.Tx }

var errOutbox = errors.New("outbox down")

func (failingTx) AppendOutbox(context.Context, ...store.OutboxEvent) error { return errOutbox }

func TestCommentWriteIsAtomicWithOutbox(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		f := newCommentFixture(t, s)
		c, err := s.CreateComment(ctxBG, alice, 4, f.onDefault, "<div>ok</div>")
		if err != nil {
			t.Fatal(err)
		}
		broken := New(failingOutbox{st}, nil)
		_, err = broken.CreateComment(ctxBG, alice, 4, f.onDefault, "<div>lost</div>")
		if !errors.Is(err, errOutbox) {
			t.Fatalf("create with a failing outbox: %v", err)
		}
		if err := broken.UpdateComment(ctxBG, alice, c.ID, "<div>lost</div>"); !errors.Is(err, errOutbox) {
			t.Fatalf("update with a failing outbox: %v", err)
		}
		if err := broken.DeleteComment(ctxBG, alice, c.ID); !errors.Is(err, errOutbox) {
			t.Fatalf("delete with a failing outbox: %v", err)
		}
		p, err := s.GetComments(ctxBG, CommentQuery{})
		if err != nil || len(p.Comments) != 1 || p.Comments[0] != c {
			t.Fatalf("after failed writes: %+v, %v; want only %+v", p.Comments, err, c)
		}
	})
}
