// Package changes is the change-event contract between the writer of
// content and its consumers: pkg/content appends one event per write
// transaction to the outbox, the relay publishes it on the event bus, and
// the indexer (pkg/indexwriter through services/indexer), the webhooks, the
// change stream (pkg/livechanges) and the render and Delivery caches'
// invalidators consume it. Subjects, kinds and the JSON payload are defined
// here once, and so is the consumers' loop (Consumer: parse, drop a
// malformed event with a log line, retry a failed one); what a change
// touched is pkg/content.Touched.
package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Subjects covers the subjects of every change event: consumers subscribe
// to it, the stream stores it.
const Subjects = SubjectPrefix + ">"

// SubjectPrefix starts the subject of every change event (the store's
// LastOutboxTransaction is asked with it).
const SubjectPrefix = "cms.changes."

// Subject is the subject of the change events of branch.
func Subject(branch int64) string { return SubjectPrefix + strconv.FormatInt(branch, 10) }

// ClockSkewMargin is subtracted from the start time of a consumer that
// reads the change stream from its own start (events.WithStartTime): the
// stream stamps events with the NATS server's clock, not this process's.
const ClockSkewMargin = 30 * time.Second

// MsgID is the deduplication id of the event of transaction tx: one event
// per transaction.
func MsgID(tx int64) string { return "tx-" + strconv.FormatInt(tx, 10) }

// Kinds of change events.
const (
	KindCreated = "created"
	KindUpdated = "updated"
	KindDeleted = "deleted"
	// KindBranchDeleted: the branch in the payload and everything stored
	// on it (its comments included) were removed permanently.
	KindBranchDeleted = "branchDeleted"
	// KindComment: a comment on the object in ObjectIDs was created,
	// changed or deleted (CommentID, Action).
	KindComment = "comment"
)

// Comment actions in Event.Action.
const (
	CommentCreated = "created"
	CommentUpdated = "updated"
	CommentDeleted = "deleted"
)

// Event is the payload of every change event, as JSON.
type Event struct {
	Branch      int64   `json:"branch"`
	Transaction int64   `json:"transaction"`
	ObjectIDs   []int64 `json:"objectIds"`
	Kind        string  `json:"kind"`
	// CommentID and Action are set on KindComment events only.
	CommentID int64  `json:"commentId,omitempty"`
	Action    string `json:"action,omitempty"`
	// User is the user name the transaction was committed for (its
	// store.TxMeta.User); empty for the system's own writes (bootstrap)
	// and for events written before it was recorded.
	User string `json:"user,omitempty"`
}

// ErrBadEvent means a payload is not a change event. Retrying cannot help.
var ErrBadEvent = errors.New("changes: malformed change event")

// Encode renders ev as its payload.
func Encode(ev Event) ([]byte, error) {
	if ev.ObjectIDs == nil {
		ev.ObjectIDs = []int64{}
	}
	return json.Marshal(ev)
}

// Parse decodes a payload. Errors wrap ErrBadEvent.
func Parse(payload []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return ev, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if ev.Transaction < 1 || ev.Branch < 1 || ev.Kind == "" {
		return ev, fmt.Errorf("%w: %s", ErrBadEvent, payload)
	}
	return ev, nil
}
