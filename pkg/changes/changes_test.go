package changes

import (
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	b, err := Encode(Event{Branch: 4, Transaction: 7, Kind: KindCreated})
	if err != nil || string(b) != `{"branch":4,"transaction":7,"objectIds":[],"kind":"created"}` {
		t.Fatalf("Encode: %s, %v", b, err)
	}
	ev, err := Parse([]byte(`{"branch":4,"transaction":8,"objectIds":[11],"kind":"comment","commentId":3,"action":"deleted"}`))
	if err != nil || ev.CommentID != 3 || ev.Action != CommentDeleted || ev.ObjectIDs[0] != 11 {
		t.Fatalf("Parse: %+v, %v", ev, err)
	}
	for _, bad := range []string{`x`, `{"branch":4,"kind":"created"}`, `{"branch":0,"transaction":1,"kind":"created"}`, `{"branch":4,"transaction":1}`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrBadEvent) {
			t.Errorf("Parse(%s): %v, want ErrBadEvent", bad, err)
		}
	}
	if Subject(42) != "cms.changes.42" || MsgID(9) != "tx-9" {
		t.Error("subject or message id")
	}
}
