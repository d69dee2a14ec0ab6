package templates

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
)

// countingReader counts the reads a render makes through the real
// Management domain.
type countingReader struct {
	Reader
	gets int
}

func (c *countingReader) GetObjects(ctx context.Context, branch string, ids []string, o content.ReadOptions) ([]content.Object, error) {
	c.gets++
	return c.Reader.GetObjects(ctx, branch, ids, o)
}

// TestMissingReferenceOneRead: a reference to an object the caller cannot
// see (a user object, for a reader) is left out of the batch read of the
// references, not read again one by one: the render makes as many reads
// as the administrator's, who sees the object.
func TestMissingReferenceOneRead(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.c.EnsureUser(ctx, content.UserSpec{Name: "someone", Password: "a-long-password"}); err != nil {
		t.Fatal(err)
	}
	admin := &auth.Principal{Name: "admin", Admin: true}
	users, err := w.c.GetTypedObjects(ctx, "4", itoa(content.TypeUser), content.ListQuery{ReadOptions: content.ReadOptions{Caller: admin}, Take: 10})
	if err != nil || len(users.Objects) != 1 {
		t.Fatalf("users: %v %v", users, err)
	}
	a4 := create(t, w.c, w.article, "", val(w.headline, content.LanguageEnUS, "By a user"), val(w.author, 0, users.Objects[0].ID))
	tpl := w.template(t, "authors", `{{range .Objects}}[{{with ref . "author"}}{{.ID}}{{end}}]{{end}}`)
	render := func(caller *auth.Principal) (string, int) {
		t.Helper()
		cr := &countingReader{Reader: w.c}
		res, err := New(cr, Limits{}, nil).Render(ctx, Request{Branch: "4", Template: tpl, Objects: ids(w.a1, w.a2, a4), Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.HTML), cr.gets
	}
	adminOut, adminGets := render(admin)
	readerOut, readerGets := render(&auth.Principal{Name: "reader", UserID: 424242})
	if want := "[" + itoa(w.ann) + "][" + itoa(w.bob) + "][" + itoa(users.Objects[0].ID) + "]"; adminOut != want {
		t.Errorf("administrator: %s, want %s", adminOut, want)
	}
	if want := "[" + itoa(w.ann) + "][" + itoa(w.bob) + "][]"; readerOut != want {
		t.Errorf("reader: %s, want %s", readerOut, want)
	}
	if readerGets != adminGets {
		t.Errorf("the reader's render made %d reads, the administrator's %d", readerGets, adminGets)
	}
}
