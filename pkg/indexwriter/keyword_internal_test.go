package indexwriter

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestModifiedByIsATerm: the user of the last transaction, which an
// internal caller may name freely, is cut to MaxTermBytes like every other
// keyword (a 64 KiB name made Elasticsearch refuse the document and the
// indexer park the event).
func TestModifiedByIsATerm(t *testing.T) {
	ix := &Indexer{log: slog.New(slog.DiscardHandler), opts: Options{MaxIndexedChars: DefaultMaxIndexedChars}}
	o := &resolved{row: store.Object{ID: 9, TypeID: 10, GUID: "g", Branch: 4, ModifiedTx: 3}, branch: 4}
	for _, user := range []string{"editor", strings.Repeat("ü", 64<<10)} {
		doc := ix.document(4, 3, o, nil, 0, map[int64]store.Transaction{3: {ID: 3, User: user, Time: time.Unix(0, 0)}}, nil)
		got, _ := doc.Fields[indexdoc.FieldModifiedBy].(string)
		if len(got) > indexdoc.MaxTermBytes || !strings.HasPrefix(user, got) || got == "" || (len(user) <= indexdoc.MaxTermBytes && got != user) {
			t.Errorf("modifiedBy of a %d-byte user: %d bytes", len(user), len(got))
		}
	}
}
