package stylesheets

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/rendercache"
)

// fontFormats maps a font file's extension to its @font-face format().
var fontFormats = map[string]string{".woff2": "woff2", ".woff": "woff", ".ttf": "truetype", ".otf": "opentype"}

// AppFonts builds app-fonts.css of branch: one @font-face per font face
// object with a valid family and file. The file is the binary proxy
// object the face's fontFaceFile names; src is FilesPath + its
// {md5 GUID}{ext} (with a format() for .woff2, .woff, .ttf, .otf).
func (s *Service) AppFonts(ctx context.Context, branch string) (Sheet, error) {
	return s.cached(ctx, "sheet:app-fonts\x00"+branch, func() (Sheet, []string, error) {
		return s.appFonts(ctx, branch)
	})
}

// appFonts builds app-fonts.css and returns its cache tags: the font face
// list and the families and files the faces name.
func (s *Service) appFonts(ctx context.Context, branch string) (Sheet, []string, error) {
	faces, err := s.objects(ctx, branch, content.TypeFontFace)
	if err != nil {
		return Sheet{}, nil, err
	}
	tags := listTags(content.TypeFontFace)
	// The families and files the faces name, read in one call each.
	var refs []string
	seen := map[int64]bool{}
	for _, o := range faces {
		v := valuesOf(o)
		for _, a := range []int64{content.AttrFontFaceFamily, content.AttrFontFaceFile} {
			if id, ok := v.ref(a); ok && !seen[id] {
				seen[id] = true
				refs = append(refs, strconv.FormatInt(id, 10))
				tags = append(tags, rendercache.ObjectTag(id)) // found or missing
			}
		}
	}
	byID := map[int64]content.Object{}
	if len(refs) > 0 {
		objs, err := s.readAll(ctx, branch, refs)
		if err != nil {
			return Sheet{}, nil, err
		}
		for _, o := range objs {
			byID[o.ID] = o
			if !rendercache.Cacheable(o.TypeID) {
				tags = nil // a user object
			}
		}
	}
	var b bytes.Buffer
	b.WriteString("/* app-fonts.css: font faces */\n")
	for _, o := range faces {
		v := valuesOf(o)
		famID, _ := v.ref(content.AttrFontFaceFamily)
		fam, ok := byID[famID]
		if !ok || fam.Deleted || fam.TypeID != content.TypeFontFamily {
			fmt.Fprintf(&b, "/* font face %d: no font family */\n", o.ID)
			continue
		}
		name, ok := valuesOf(fam).str(content.AttrFontFamilyName)
		if !ok || name == "" || len([]rune(name)) > MaxStringRunes {
			fmt.Fprintf(&b, "/* font face %d: its family has no valid fontFamilyName */\n", o.ID)
			continue
		}
		fileID, _ := v.ref(content.AttrFontFaceFile)
		src, ok := fontSource(byID[fileID])
		if !ok {
			fmt.Fprintf(&b, "/* font face %d: no valid font file */\n", o.ID)
			continue
		}
		fmt.Fprintf(&b, "@font-face { font-family: %s; src: %s;", Quote(name), src)
		if f, ok := v.num(content.AttrFontFaceWeight); ok {
			if n, ok := Number(f, 1, 1000, ""); ok && f == float64(int64(f)) {
				fmt.Fprintf(&b, " font-weight: %s;", n)
			}
		}
		if raw, ok := v.str(content.AttrFontFaceStyle); ok {
			if kw, ok := Keyword(raw, "normal", "italic", "oblique"); ok {
				fmt.Fprintf(&b, " font-style: %s;", kw)
			}
		}
		b.WriteString(" font-display: swap; }\n")
	}
	sh, err := s.sheet("app-fonts.css\x00"+branch, b.Bytes())
	return sh, tags, err
}

// readAll reads objects by id, leaving out the ones that do not exist,
// in one read.
func (s *Service) readAll(ctx context.Context, branch string, ids []string) ([]content.Object, error) {
	return s.r.GetObjects(ctx, branch, ids, content.ReadOptions{Inherited: true, SkipMissing: true})
}

// fontSource is the src value of a font file (a binary proxy object with
// hash 11000 and extension 11005); the name is validated by pkg/files.
func fontSource(bpo content.Object) (string, bool) {
	if bpo.ID == 0 || bpo.Deleted {
		return "", false
	}
	v := valuesOf(bpo)
	hash, _ := v.str(11000)
	ext, _ := v.str(11005)
	n, err := files.ProxyName(hash, ext)
	if err != nil {
		return "", false
	}
	src := "url(" + Quote(FilesPath+n.String()) + ")"
	if f, ok := fontFormats[strings.ToLower(n.Ext)]; ok {
		src += " format(" + Quote(f) + ")"
	}
	return src, true
}

// Object builds {objectId}.css: the TextRef.CSS source (styleSheetSource)
// of the stylesheet object id. An object that does not exist, is deleted
// or is of another type is errkind.NotFound. A source with a forbidden
// construct (Unsafe) is withheld: the sheet is only a comment naming it.
func (s *Service) Object(ctx context.Context, branch string, id int64) (Sheet, error) {
	key := "sheet:object\x00" + branch + "\x00" + strconv.FormatInt(id, 10)
	return s.cached(ctx, key, func() (Sheet, []string, error) {
		sh, err := s.object(ctx, branch, id)
		return sh, []string{rendercache.TypeTag(content.TypeBranch), rendercache.ObjectTag(id)}, err
	})
}

func (s *Service) object(ctx context.Context, branch string, id int64) (Sheet, error) {
	objs, err := s.r.GetObjects(ctx, branch, []string{strconv.FormatInt(id, 10)}, content.ReadOptions{Inherited: true})
	if err != nil {
		return Sheet{}, err
	}
	o := objs[0]
	if o.Deleted || o.TypeID != content.TypeCascadingStyleSheet {
		return Sheet{}, errkind.New(errkind.NotFound, fmt.Sprintf("stylesheet object %d not found", id))
	}
	src, _ := valuesOf(o).str(content.AttrStyleSheetSource)
	if len(src) > s.maxBytes {
		return Sheet{}, errkind.New(errkind.TooLarge, fmt.Sprintf("the stylesheet is %d bytes, the limit is %d", len(src), s.maxBytes))
	}
	css := src
	if bad := Unsafe(src); bad != "" {
		s.log.Warn("stylesheet withheld", "branch", branch, "object", id, "construct", bad)
		css = fmt.Sprintf("/* stylesheet %d withheld: its source contains a forbidden construct (%s) */\n", id, Comment(Label(bad)))
	}
	return s.sheet("object.css\x00"+branch+"\x00"+strconv.FormatInt(id, 10), []byte(css))
}
