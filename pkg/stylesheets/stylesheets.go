// Package stylesheets builds the Rendering group's stylesheets from the
// styling objects of a branch (CONVENTIONS §7.2, types 300-304):
// app-styles.css from paragraph styles, text alignments and font
// families, app-fonts.css from font faces, and {objectId}.css from a
// stylesheet object's TextRef.CSS source. They read the current
// Management view of the branch (what a preview shows), so a write is
// visible in the next request. Every value is validated or escaped
// (escape.go) so content cannot break out of a declaration; a stylesheet
// object whose source holds a forbidden construct (source.go) is withheld.
package stylesheets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/etag"
	"github.com/cmsplatform/cms/pkg/rendercache"
)

// Limits.
const (
	// MaxOutputBytes bounds one stylesheet (1 MiB); a larger one is
	// errkind.TooLarge (413).
	MaxOutputBytes = 1 << 20
	// MaxObjects bounds the styling objects of one type a built sheet
	// reads (10,000); more is errkind.TooLarge.
	MaxObjects = 10000
	// pageSize is the list page the objects are read in.
	pageSize = 500
)

// ContentType is the media type of every stylesheet.
const ContentType = "text/css; charset=utf-8"

// FilesPath is the path font files are linked under: the Rendering
// group's GET /files/{md5}{ext} (files are addressed by content, so the
// URL changes when the file does and caches never go stale).
const FilesPath = "/apis/rendering/v1/files/"

// Reader is the part of the Management domain (pkg/content) read.
type Reader interface {
	GetObjects(ctx context.Context, branch string, ids []string, o content.ReadOptions) ([]content.Object, error)
	GetTypedObjects(ctx context.Context, branch, typ string, q content.ListQuery) (content.Page, error)
}

// Service builds stylesheets.
type Service struct {
	r     Reader
	log   *slog.Logger
	cache *rendercache.Cache // nil: nothing cached (cache.go)
	// the limits (MaxObjects, MaxOutputBytes; lowered by tests)
	maxObjects, maxBytes int
}

// New returns a Service reading through r, logging to log (nil: nowhere).
func New(r Reader, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{r: r, log: log, maxObjects: MaxObjects, maxBytes: MaxOutputBytes}
}

// Sheet is one built stylesheet.
type Sheet struct {
	CSS  []byte
	ETag string // strong validator: a hash of the sheet's content
}

func (s *Service) sheet(op string, css []byte) (Sheet, error) {
	if len(css) > s.maxBytes {
		return Sheet{}, errkind.New(errkind.TooLarge, fmt.Sprintf("the stylesheet is %d bytes, the limit is %d", len(css), s.maxBytes))
	}
	return Sheet{CSS: css, ETag: etag.Of(op, css, nil)}, nil
}

// objects reads the live objects of a type visible on branch (inherited
// values included), in id order.
func (s *Service) objects(ctx context.Context, branch string, typ int64) ([]content.Object, error) {
	live := false
	q := content.ListQuery{ReadOptions: content.ReadOptions{Inherited: true}, Deleted: &live, Take: pageSize}
	var out []content.Object
	for {
		p, err := s.r.GetTypedObjects(ctx, branch, strconv.FormatInt(typ, 10), q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Objects...)
		if len(out) > s.maxObjects {
			return nil, errkind.New(errkind.TooLarge, fmt.Sprintf("more than %d objects of type %d", s.maxObjects, typ))
		}
		if p.Continue == "" {
			return out, nil
		}
		q.Continue = p.Continue
	}
}

// values is an object's language-independent values by attribute (the
// first row of each, which is what single-valued attributes hold).
type values map[int64]json.RawMessage

func valuesOf(o content.Object) values {
	v := values{}
	for _, x := range o.Values {
		if _, ok := v[x.Attribute]; !ok && x.Language == 0 && x.Variant == 0 {
			v[x.Attribute] = x.JSON
		}
	}
	return v
}

func (v values) str(a int64) (string, bool) {
	var s string
	if raw, ok := v[a]; !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func (v values) num(a int64) (float64, bool) {
	var f float64
	if raw, ok := v[a]; !ok || json.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	return f, true
}

func (v values) ref(a int64) (int64, bool) {
	f, ok := v.num(a)
	if !ok || f != float64(int64(f)) || f <= 0 {
		return 0, false
	}
	return int64(f), true
}

func (v values) boolean(a int64) bool {
	var b bool
	raw, ok := v[a]
	return ok && json.Unmarshal(raw, &b) == nil && b
}

// className is the class an object's rule selects: its ApiIdentifier when
// that is a valid CSS identifier, else prefix-{id}.
func className(o content.Object, prefix string) string {
	if c, ok := Ident(o.APIIdentifier); ok {
		return c
	}
	return prefix + "-" + strconv.FormatInt(o.ID, 10)
}

// genericFamilies are the fallback keywords a font family may name.
var genericFamilies = []string{"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "ui-serif", "ui-sans-serif", "ui-monospace", "math"}

// familyList is the font-family value of a font family object.
func familyList(v values) (string, bool) {
	name, ok := v.str(content.AttrFontFamilyName)
	if !ok || name == "" || len([]rune(name)) > MaxStringRunes {
		return "", false
	}
	list := Quote(name)
	if g, ok := v.str(content.AttrFontFamilyGeneric); ok {
		if kw, ok := Keyword(g, genericFamilies...); ok {
			list += ", " + kw
		}
	}
	return list, true
}

// AppStyles builds app-styles.css of branch: one rule per font family
// (.ff-{id} or its ApiIdentifier: font-family), per text alignment
// (.ta-{id}: text-align) and per paragraph style (.ps-{id}: the style's
// font family, size, line height, colour, alignment, weight, italic).
// Values that fail validation are left out (a comment names them).
func (s *Service) AppStyles(ctx context.Context, branch string) (Sheet, error) {
	return s.cached(ctx, "sheet:app-styles\x00"+branch, func() (Sheet, []string, error) {
		sh, err := s.appStyles(ctx, branch)
		return sh, listTags(content.TypeFontFamily, content.TypeTextAlignment, content.TypeParagraphStyle), err
	})
}

func (s *Service) appStyles(ctx context.Context, branch string) (Sheet, error) {
	families, err := s.objects(ctx, branch, content.TypeFontFamily)
	if err != nil {
		return Sheet{}, err
	}
	aligns, err := s.objects(ctx, branch, content.TypeTextAlignment)
	if err != nil {
		return Sheet{}, err
	}
	styles, err := s.objects(ctx, branch, content.TypeParagraphStyle)
	if err != nil {
		return Sheet{}, err
	}
	var b bytes.Buffer
	b.WriteString("/* app-styles.css: paragraph styles, text alignments and font families */\n")
	familyOf := map[int64]string{}
	for _, o := range families {
		v := valuesOf(o)
		list, ok := familyList(v)
		if !ok {
			fmt.Fprintf(&b, "/* font family %d: no valid fontFamilyName */\n", o.ID)
			continue
		}
		familyOf[o.ID] = list
		fmt.Fprintf(&b, ".%s { font-family: %s; }\n", className(o, "ff"), list)
	}
	alignOf := map[int64]string{}
	for _, o := range aligns {
		v := valuesOf(o)
		raw, _ := v.str(content.AttrTextAlignmentValue)
		kw, ok := Keyword(raw, "left", "right", "center", "justify", "start", "end")
		if !ok {
			fmt.Fprintf(&b, "/* text alignment %d: no valid textAlignmentValue */\n", o.ID)
			continue
		}
		alignOf[o.ID] = kw
		fmt.Fprintf(&b, ".%s { text-align: %s; }\n", className(o, "ta"), kw)
	}
	for _, o := range styles {
		writeParagraphStyle(&b, o, familyOf, alignOf)
	}
	return s.sheet("app-styles.css\x00"+branch, b.Bytes())
}

// writeParagraphStyle writes one paragraph style's rule.
func writeParagraphStyle(b *bytes.Buffer, o content.Object, familyOf, alignOf map[int64]string) {
	v := valuesOf(o)
	var decls []string
	var skipped []string
	if id, ok := v.ref(content.AttrParagraphStyleFontFamily); ok {
		if list, ok := familyOf[id]; ok {
			decls = append(decls, "font-family: "+list)
		} else {
			skipped = append(skipped, "paragraphStyleFontFamily")
		}
	}
	if f, ok := v.num(content.AttrParagraphStyleFontSize); ok {
		if n, ok := Number(f, 0, 1000, "pt"); ok {
			decls = append(decls, "font-size: "+n)
		} else {
			skipped = append(skipped, "paragraphStyleFontSize")
		}
	} else if _, present := v[content.AttrParagraphStyleFontSize]; present {
		skipped = append(skipped, "paragraphStyleFontSize")
	}
	if f, ok := v.num(content.AttrParagraphStyleLineHeight); ok {
		if n, ok := Number(f, 0, 100, ""); ok {
			decls = append(decls, "line-height: "+n)
		} else {
			skipped = append(skipped, "paragraphStyleLineHeight")
		}
	}
	if _, present := v[content.AttrParagraphStyleColor]; present {
		raw, _ := v.str(content.AttrParagraphStyleColor)
		if c, ok := Color(raw); ok {
			decls = append(decls, "color: "+c)
		} else {
			skipped = append(skipped, "paragraphStyleColor")
		}
	}
	if id, ok := v.ref(content.AttrParagraphStyleTextAlignment); ok {
		if kw, ok := alignOf[id]; ok {
			decls = append(decls, "text-align: "+kw)
		} else {
			skipped = append(skipped, "paragraphStyleTextAlignment")
		}
	}
	if f, ok := v.num(content.AttrParagraphStyleFontWeight); ok {
		if n, ok := Number(f, 1, 1000, ""); ok && f == float64(int64(f)) {
			decls = append(decls, "font-weight: "+n)
		} else {
			skipped = append(skipped, "paragraphStyleFontWeight")
		}
	}
	if v.boolean(content.AttrParagraphStyleItalic) {
		decls = append(decls, "font-style: italic")
	}
	if len(skipped) > 0 {
		fmt.Fprintf(b, "/* paragraph style %d: invalid values left out: %v */\n", o.ID, skipped)
	}
	fmt.Fprintf(b, ".%s {", className(o, "ps"))
	for _, d := range decls {
		b.WriteString(" " + d + ";")
	}
	b.WriteString(" }\n")
}
