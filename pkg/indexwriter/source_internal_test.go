package indexwriter

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestSourceOmitsSecrets: a user's password hash never reaches the source.
func TestSourceOmitsSecrets(t *testing.T) {
	o := &resolved{row: store.Object{ID: 9, TypeID: content.TypeUser, GUID: "g"}, values: []store.Value{
		{AttributeID: content.AttrUserName, JSON: []byte(`"bob"`)},
		{AttributeID: content.AttrUserPassword, JSON: []byte(`"$2a$10$hash"`)},
	}}
	raw, err := buildSource(o, 3, time.Unix(0, 0), map[int64]string{content.AttrUserName: "String.UserName"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := indexdoc.DecodeSource(map[string]any{indexdoc.FieldSource: raw})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Values) != 1 || src.Values[0].Attr != content.AttrUserName || string(src.Values[0].Value) != `"bob"` {
		b, _ := json.Marshal(src.Values)
		t.Fatalf("values = %s", b)
	}
}
