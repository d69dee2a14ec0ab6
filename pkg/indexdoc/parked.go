package indexdoc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// ParkedIndex holds one document per change event the indexer parked (gave
// up on after it failed deterministically on a healthy engine): the
// durable parked list. The writer adds a document before it records the
// event's transaction as the change-tracking version and deletes it once a
// retry applied the event, so a reader that sees the version also sees
// the parked document: read-your-writes for a version that includes a
// parked transaction fails with ErrParked instead of answering without
// its changes.
const ParkedIndex = "indexer-parked"

// Fields of a ParkedIndex document.
const (
	FieldParkedTx         = "tx"         // long: the event's transaction
	FieldParkedSeq        = "seq"        // long: its change-stream sequence
	FieldParkedSubject    = "subject"    // keyword
	FieldParkedMsgID      = "msgId"      // keyword
	FieldParkedDeliveries = "deliveries" // long: deliveries when parked
	FieldParkedError      = "error"      // stored: why it was parked
	FieldParkedAt         = "at"         // date: when it was parked
	FieldParkedPayload    = "payload"    // stored: the change event (pkg/changes)
)

// ParkedMapping is the mapping of ParkedIndex.
func ParkedMapping() search.Mapping {
	return search.Mapping{Fields: map[string]search.Kind{
		FieldParkedTx: search.Long, FieldParkedSeq: search.Long, FieldParkedSubject: search.Keyword,
		FieldParkedMsgID: search.Keyword, FieldParkedDeliveries: search.Long, FieldParkedError: search.Stored,
		FieldParkedAt: search.Date, FieldParkedPayload: search.Stored,
	}}
}

// ParkedID is the document id of the parked event at stream sequence seq
// of transaction tx.
func ParkedID(tx int64, seq uint64) string {
	return strconv.FormatInt(tx, 10) + "-" + strconv.FormatUint(seq, 10)
}

// ParkedEvent is one entry of the parked list.
type ParkedEvent struct {
	Transaction int64
	Sequence    uint64 // in the change stream
	Subject     string
	MsgID       string
	Deliveries  uint64
	Err         string
	At          time.Time
	Payload     []byte
}

// Document is e as a ParkedIndex document written at version (which must
// exceed the tombstone a previous retry of the same event left).
func (e ParkedEvent) Document(version int64) search.Document {
	return search.Document{ID: ParkedID(e.Transaction, e.Sequence), Version: version, Fields: map[string]any{
		FieldParkedTx: e.Transaction, FieldParkedSeq: int64(e.Sequence), FieldParkedSubject: e.Subject,
		FieldParkedMsgID: e.MsgID, FieldParkedDeliveries: int64(e.Deliveries), FieldParkedError: e.Err,
		FieldParkedAt: e.At, FieldParkedPayload: string(e.Payload),
	}}
}

// ParkedFromHit decodes a ParkedIndex search hit.
func ParkedFromHit(h search.Hit) ParkedEvent {
	i64 := func(f string) int64 { v, _ := h.Fields[f].(int64); return v }
	str := func(f string) string { v, _ := h.Fields[f].(string); return v }
	at, _ := h.Fields[FieldParkedAt].(time.Time)
	return ParkedEvent{Transaction: i64(FieldParkedTx), Sequence: uint64(max(0, i64(FieldParkedSeq))),
		Subject: str(FieldParkedSubject), MsgID: str(FieldParkedMsgID), Deliveries: uint64(max(0, i64(FieldParkedDeliveries))),
		Err: str(FieldParkedError), At: at, Payload: []byte(str(FieldParkedPayload))}
}

// MaxParkedList bounds one listing of the parked list.
const MaxParkedList = 1000

// ErrParked means a read-your-writes request asked for a version that
// includes a parked transaction: the index lacks its changes. Errors
// carrying it are *ParkedError.
var ErrParked = errors.New("indexdoc: a transaction of the requested version is parked")

// ParkedError names the oldest parked transaction a requested version
// includes.
type ParkedError struct {
	Transaction int64
	MinVersion  int64
}

func (e *ParkedError) Error() string {
	return fmt.Sprintf("transaction %d (included in version %d) was parked by the indexer: its changes are not in the index until it is retried (cms indexer retry)",
		e.Transaction, e.MinVersion)
}

// Is makes errors.Is(err, ErrParked) true.
func (e *ParkedError) Is(target error) bool { return target == ErrParked }

// Parked lists parked events with a transaction up to upTo (all when
// upTo <= 0), oldest transaction first, at most limit (MaxParkedList when
// <= 0 or above); total is how many there are.
func (c ChangeTracking) Parked(ctx context.Context, upTo int64, limit int) (events []ParkedEvent, total int64, err error) {
	if limit <= 0 || limit > MaxParkedList {
		limit = MaxParkedList
	}
	var q search.Query
	if upTo > 0 {
		q = search.Range{Field: FieldParkedTx, Lte: upTo}
	}
	res, err := c.eng.Search(ctx, search.SearchRequest{Index: c.prefix + ParkedIndex, Query: q,
		Sort: []search.SortField{{Field: FieldParkedTx}, {Field: FieldParkedSeq}}, Size: limit})
	switch {
	case errors.Is(err, search.ErrIndexNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, fmt.Errorf("indexdoc: read parked events: %w", err)
	}
	for _, h := range res.Hits {
		events = append(events, ParkedFromHit(h))
	}
	return events, res.Total, nil
}

// IsParked reports whether transaction tx is parked: the version counts
// it, the index lacks its changes (the live change stream does not
// announce it as applied).
func (c ChangeTracking) IsParked(ctx context.Context, tx int64) (bool, error) {
	res, err := c.eng.Search(ctx, search.SearchRequest{Index: c.prefix + ParkedIndex,
		Query: search.Term{Field: FieldParkedTx, Value: tx}, Size: 1})
	switch {
	case errors.Is(err, search.ErrIndexNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("indexdoc: read parked events: %w", err)
	}
	return res.Total > 0, nil
}

// CheckVisible returns a *ParkedError when a transaction up to version is
// parked, i.e. when an index at version would still lack its changes.
func (c ChangeTracking) CheckVisible(ctx context.Context, version int64) error {
	if version <= 0 {
		return nil
	}
	p, _, err := c.Parked(ctx, version, 1)
	if err != nil {
		return err
	}
	if len(p) > 0 {
		return &ParkedError{Transaction: p[0].Transaction, MinVersion: version}
	}
	return nil
}

// WaitForVisible is WaitForVersion for read-your-writes: once the version
// reaches minVersion it also fails with a *ParkedError when a transaction
// up to minVersion is parked.
func (c ChangeTracking) WaitForVisible(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	v, err := c.WaitForVersion(ctx, minVersion, maxWait)
	if err != nil {
		return v, err
	}
	return v, c.CheckVisible(ctx, minVersion)
}
