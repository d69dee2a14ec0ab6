// Package storetest is the conformance suite every store.Store
// implementation runs: `storetest.Run(t, factory)` from the backend's
// *_test.go. The embedded backend passes all of it; a difference between
// backends is a bug in one of them.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Factory returns a fresh, empty, migrated store for one test. It registers
// its own cleanup (closing the store, dropping the database).
type Factory func(t *testing.T) store.Store

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	testenv.RunCases(t, newStore, []testenv.Case[store.Store]{
		{Name: "TransactionIDs", Run: testTransactionIDs},
		{Name: "CommitRollback", Run: testCommitRollback},
		{Name: "TxDone", Run: testTxDone},
		{Name: "ReadYourWritesAndIsolation", Run: testReadYourWrites},
		{Name: "ObjectRoundTrip", Run: testObjectRoundTrip},
		{Name: "ObjectIDAllocation", Run: testObjectIDAllocation},
		{Name: "GetObjectsBatchOrder", Run: testGetObjectsBatchOrder},
		{Name: "UniqueConflicts", Run: testUniqueConflicts},
		{Name: "FindAndListObjects", Run: testFindAndListObjects},
		{Name: "ValuesRoundTrip", Run: testValuesRoundTrip},
		{Name: "DeleteValues", Run: testDeleteValues},
		{Name: "ValueUnits", Run: testValueUnits},
		{Name: "SoftDelete", Run: testSoftDelete},
		{Name: "ChainReads", Run: testChainReads},
		{Name: "ListBranchObjectIDs", Run: testListBranchObjectIDs},
		{Name: "Purge", Run: testPurge},
		{Name: "Outbox", Run: testOutbox},
		{Name: "OutboxConcurrentClaims", Run: testOutboxConcurrentClaims},
		{Name: "LastOutboxTransaction", Run: testLastOutboxTransaction},
		{Name: "ConcurrentWriters", Run: testConcurrentWriters},
		{Name: "ConcurrentWritersWithFailures", Run: testConcurrentWritersWithFailures},
		{Name: "CommentRoundTrip", Run: testCommentRoundTrip},
		{Name: "CommentUpdateDelete", Run: testCommentUpdateDelete},
		{Name: "ListComments", Run: testListComments},
		{Name: "CommentsInTx", Run: testCommentsInTx},
		{Name: "CommentsPurgedWithBranch", Run: testCommentsPurgedWithBranch},
		{Name: "Jobs", Run: testJobs},
		{Name: "WebhookAttempts", Run: testWebhookAttempts},
		{Name: "ValueHistory", Run: testValueHistory},
		{Name: "ObjectHistory", Run: testObjectHistory},
		{Name: "TransactionObjectIDs", Run: testTransactionObjectIDs},
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// write runs fn in a committed transaction and returns its id.
func write(t *testing.T, s store.Store, fn func(tx store.Tx)) int64 {
	t.Helper()
	ctx := ctxT(t)
	tx, err := s.Begin(ctx, store.TxMeta{User: "tester", Comment: t.Name()})
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer func() { _ = tx.Rollback() }()
	fn(tx)
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return tx.ID()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustBe(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func ids(objs []store.Object) []int64 {
	out := make([]int64, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out
}

func eqIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got ids %v, want %v", what, got, want)
	}
}

func obj(id, branch, typ int64, guid, api string) store.Object {
	return store.Object{ID: id, Branch: branch, TypeID: typ, GUID: guid, APIIdentifier: api}
}
