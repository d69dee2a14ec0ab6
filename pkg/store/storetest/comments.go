package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

func commentIDs(cs []store.Comment) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func insertComment(t *testing.T, ctx context.Context, tx store.Tx, branch, object int64, user, body string) store.Comment {
	t.Helper()
	c, err := tx.InsertComment(ctx, store.Comment{Branch: branch, ObjectID: object, User: user, Body: body})
	must(t, err)
	return c
}

// testCommentRoundTrip: ids, times and transactions are set by the store,
// a rollback leaves nothing, reads see the transaction's own writes.
func testCommentRoundTrip(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	_, err := s.GetComment(ctx, 1)
	mustBe(t, err, store.ErrNotFound, "GetComment on empty store")

	when := time.Date(2025, 6, 15, 10, 30, 0, 123456789, time.UTC)
	tx, err := s.Begin(ctx, store.TxMeta{User: "alice", Time: when})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	c := insertComment(t, ctx, tx, 4, 100, "Alice", "<div>one</div>")
	if c.ID <= 0 || c.CreatedTx != tx.ID() || c.ModifiedTx != tx.ID() || c.Deleted ||
		!c.Created.Equal(when.Truncate(time.Microsecond)) || !c.Modified.Equal(c.Created) {
		t.Fatalf("inserted comment = %+v (tx %d)", c, tx.ID())
	}
	c2 := insertComment(t, ctx, tx, 4, 100, "", "<div>two</div>")
	if c2.ID <= c.ID {
		t.Fatalf("comment ids not increasing: %d then %d", c.ID, c2.ID)
	}
	got, err := tx.GetComment(ctx, c.ID)
	must(t, err)
	if got != c {
		t.Fatalf("read in tx = %+v, want %+v", got, c)
	}
	if _, err := s.GetComment(ctx, c.ID); err == nil {
		t.Fatal("uncommitted comment visible outside its transaction")
	}
	_, err = tx.InsertComment(ctx, store.Comment{Branch: 4, ObjectID: 0, Body: "x"})
	mustBe(t, err, store.ErrInvalidArgument, "comment without object")
	_, err = tx.InsertComment(ctx, store.Comment{Branch: -1, ObjectID: 1, Body: "x"})
	mustBe(t, err, store.ErrInvalidArgument, "comment with negative branch")
	must(t, tx.Commit(ctx))

	got, err = s.GetComment(ctx, c.ID)
	must(t, err)
	if got != c || got.Created.Location() != time.UTC {
		t.Fatalf("committed comment = %+v, want %+v", got, c)
	}
	got2, err := s.GetComment(ctx, c2.ID)
	must(t, err)
	if got2.User != "" || got2.Body != "<div>two</div>" {
		t.Fatalf("second comment = %+v", got2)
	}

	// A rolled-back insert leaves nothing behind.
	tx, err = s.Begin(ctx, store.TxMeta{})
	must(t, err)
	gone := insertComment(t, ctx, tx, 4, 100, "bob", "<div>gone</div>")
	must(t, tx.Rollback())
	if got, err := s.GetComment(ctx, gone.ID); err == nil && got.Body == "<div>gone</div>" {
		t.Fatalf("rolled-back comment is visible: %+v", got)
	}
	write(t, s, func(tx store.Tx) {
		c3 := insertComment(t, ctx, tx, 4, 100, "bob", "<div>three</div>")
		if c3.ID <= c2.ID {
			t.Errorf("comment id %d after rollback is not above %d", c3.ID, c2.ID)
		}
	})
	_, err = tx.InsertComment(ctx, store.Comment{Branch: 4, ObjectID: 1})
	mustBe(t, err, store.ErrTxDone, "InsertComment after Rollback")
}

// testCommentUpdateDelete: body updates and soft deletes bump Modified and
// ModifiedTx only; unknown ids are ErrNotFound.
func testCommentUpdateDelete(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var c store.Comment
	tx, err := s.Begin(ctx, store.TxMeta{Time: t0})
	must(t, err)
	c = insertComment(t, ctx, tx, 7, 9, "alice", "<div>a</div>")
	must(t, tx.Commit(ctx))

	t1 := t0.Add(time.Hour)
	tx, err = s.Begin(ctx, store.TxMeta{Time: t1})
	must(t, err)
	must(t, tx.UpdateCommentBody(ctx, c.ID, "<div>b</div>"))
	mustBe(t, tx.UpdateCommentBody(ctx, c.ID+1000, "<div>x</div>"), store.ErrNotFound, "update unknown comment")
	must(t, tx.Commit(ctx))
	upd := tx.ID()
	got, err := s.GetComment(ctx, c.ID)
	must(t, err)
	if got.Body != "<div>b</div>" || !got.Created.Equal(t0) || !got.Modified.Equal(t1) ||
		got.CreatedTx != c.CreatedTx || got.ModifiedTx != upd || got.Deleted || got.User != "alice" {
		t.Fatalf("after update = %+v", got)
	}

	t2 := t1.Add(time.Hour)
	tx, err = s.Begin(ctx, store.TxMeta{Time: t2})
	must(t, err)
	was, err := tx.DeleteComment(ctx, c.ID)
	must(t, err)
	if !was {
		t.Fatal("DeleteComment of a live comment reported false")
	}
	was, err = tx.DeleteComment(ctx, c.ID)
	must(t, err)
	if was {
		t.Fatal("second DeleteComment reported true")
	}
	_, err = tx.DeleteComment(ctx, c.ID+1000)
	mustBe(t, err, store.ErrNotFound, "delete unknown comment")
	must(t, tx.Commit(ctx))
	del := tx.ID()
	got, err = s.GetComment(ctx, c.ID)
	must(t, err)
	if !got.Deleted || !got.Modified.Equal(t2) || got.ModifiedTx != del || got.Body != "<div>b</div>" {
		t.Fatalf("after delete = %+v", got)
	}
	// Deleting again changes nothing, not even ModifiedTx.
	write(t, s, func(tx store.Tx) {
		if was, err := tx.DeleteComment(ctx, c.ID); err != nil || was {
			t.Errorf("DeleteComment of deleted = %v, %v", was, err)
		}
	})
	if got2, _ := s.GetComment(ctx, c.ID); got2 != got {
		t.Fatalf("re-delete changed the row: %+v → %+v", got, got2)
	}
}

// testListComments: filters combine with AND, order is id descending,
// BeforeID/Limit page without gaps or repeats, user matches without case.
func testListComments(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var all []store.Comment
	write(t, s, func(tx store.Tx) {
		for i := range 12 {
			branch := int64(4 + i%2)   // 4, 5, 4, 5 …
			object := int64(100 + i%3) // 100, 101, 102 …
			user := []string{"Alice", "bob", "ALICE", "Ünal"}[i%4]
			all = append(all, insertComment(t, ctx, tx, branch, object, user, fmt.Sprintf("<div>%d</div>", i)))
		}
	})
	write(t, s, func(tx store.Tx) {
		for _, i := range []int{1, 4, 9} {
			_, err := tx.DeleteComment(ctx, all[i].ID)
			must(t, err)
		}
	})
	deleted := map[int64]bool{all[1].ID: true, all[4].ID: true, all[9].ID: true}
	want := func(keep func(i int, c store.Comment) bool) []int64 {
		var out []int64
		for i := len(all) - 1; i >= 0; i-- {
			if keep(i, all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}
	list := func(q store.CommentQuery) []int64 {
		t.Helper()
		cs, err := s.ListComments(ctx, q)
		must(t, err)
		for i := 1; i < len(cs); i++ {
			if cs[i].ID >= cs[i-1].ID {
				t.Fatalf("not id descending: %v", commentIDs(cs))
			}
		}
		return commentIDs(cs)
	}
	b4, o101, yes, no := int64(4), int64(101), true, false
	eqIDs(t, "all", list(store.CommentQuery{}), want(func(int, store.Comment) bool { return true }))
	eqIDs(t, "branch 4", list(store.CommentQuery{Branch: &b4}), want(func(i int, _ store.Comment) bool { return i%2 == 0 }))
	eqIDs(t, "object 101", list(store.CommentQuery{ObjectID: &o101}), want(func(i int, _ store.Comment) bool { return i%3 == 1 }))
	eqIDs(t, "user alice (any case)", list(store.CommentQuery{User: "aLiCe"}), want(func(i int, _ store.Comment) bool { return i%4 == 0 || i%4 == 2 }))
	eqIDs(t, "user ünal (non-ASCII case)", list(store.CommentQuery{User: "ÜNAL"}), want(func(i int, _ store.Comment) bool { return i%4 == 3 }))
	eqIDs(t, "deleted", list(store.CommentQuery{Deleted: &yes}), want(func(_ int, c store.Comment) bool { return deleted[c.ID] }))
	eqIDs(t, "live on branch 4 object 101", list(store.CommentQuery{Branch: &b4, ObjectID: &o101, Deleted: &no}),
		want(func(i int, c store.Comment) bool { return i%2 == 0 && i%3 == 1 && !deleted[c.ID] }))
	eqIDs(t, "unknown user", list(store.CommentQuery{User: "carol"}), nil)

	// Keyset paging by 5 sees every comment exactly once.
	var paged []int64
	before := int64(0)
	for {
		page := list(store.CommentQuery{BeforeID: before, Limit: 5})
		if len(page) == 0 {
			break
		}
		if len(page) > 5 {
			t.Fatalf("page of %d > limit 5", len(page))
		}
		paged = append(paged, page...)
		before = page[len(page)-1]
	}
	eqIDs(t, "paged", paged, want(func(int, store.Comment) bool { return true }))
}

// testCommentsInTx: a transaction lists its own uncommitted comments,
// nobody else does.
func testCommentsInTx(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	c := insertComment(t, ctx, tx, 4, 1, "u", "<div/>")
	cs, err := tx.ListComments(ctx, store.CommentQuery{})
	must(t, err)
	eqIDs(t, "in tx", commentIDs(cs), []int64{c.ID})
	cs, err = s.ListComments(ctx, store.CommentQuery{})
	must(t, err)
	eqIDs(t, "outside tx", commentIDs(cs), nil)
}

// testCommentsPurgedWithBranch: PurgeBranch removes the branch's comments
// and no others.
func testCommentsPurgedWithBranch(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var keep, gone store.Comment
	write(t, s, func(tx store.Tx) {
		keep = insertComment(t, ctx, tx, 4, 1, "u", "<div>keep</div>")
		gone = insertComment(t, ctx, tx, 50, 1, "u", "<div>gone</div>")
	})
	write(t, s, func(tx store.Tx) {
		_, err := tx.PurgeBranch(ctx, 50)
		must(t, err)
	})
	_, err := s.GetComment(ctx, gone.ID)
	mustBe(t, err, store.ErrNotFound, "comment of a purged branch")
	if _, err := s.GetComment(ctx, keep.ID); err != nil {
		t.Fatalf("comment of another branch: %v", err)
	}
}
