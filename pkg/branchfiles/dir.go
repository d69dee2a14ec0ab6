package branchfiles

import (
	"bytes"
	"crypto/md5" //nolint:gosec // MD5 is the content address of NovaDB's file names, not a security measure
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Set is an export in memory: the objects by the path of their file
// (slash-separated, relative to the directory: "types/<guid>.json",
// "objects/<type>/<guid>.json") and the names of the stored files under
// FilesDir ("<md5 guid>.<extension>").
type Set struct {
	Objects map[string]Object
	Files   []string
}

// Paths are the object files' paths in order.
func (s *Set) Paths() []string {
	out := make([]string, 0, len(s.Objects))
	for p := range s.Objects {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// objectPath is the file of o, whose type is typeRef and typeGUID.
func objectPath(o Object, typeRef int64, typeGUID string) string {
	switch k := kind(typeRef); k {
	case ObjectsDir:
		return path.Join(k, folderName(o.Type, typeGUID), o.GUID+".json")
	default:
		return path.Join(k, o.GUID+".json")
	}
}

// fileName is the name under FilesDir of the content with MD5 hash (GUID
// or 32-hex form) and extension ext (with or without the dot): the lower
// case GUID form plus the extension, or "" when hash is no MD5.
func fileName(hash, ext string) string {
	h := strings.ToLower(strings.ReplaceAll(hash, "-", ""))
	if b, err := hex.DecodeString(h); err != nil || len(b) != md5.Size {
		return ""
	}
	g := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	ext = strings.TrimPrefix(ext, ".")
	if ext == "" || !safeName.MatchString(ext) {
		return g
	}
	return g + "." + ext
}

// md5GUID is the MD5 of r in GUID form.
func md5GUID(r io.Reader) (string, error) {
	h := md5.New() //nolint:gosec // the content address, see the import
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return fileName(hex.EncodeToString(h.Sum(nil)), ""), nil
}

// fileHash is the GUID part of a name under FilesDir.
func fileHash(name string) string {
	g, _, _ := strings.Cut(name, ".")
	return g
}

// write writes the object files of s into dir and removes every other
// object file there (an object gone from the branch); stored files are
// written by the exporter (Export).
func (s *Set) write(dir string) error {
	keep := map[string]bool{}
	for _, p := range s.Paths() {
		b, err := Encode(s.Objects[p])
		if err != nil {
			return err
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		keep[full] = true
		old, err := os.ReadFile(full) //nolint:gosec // a file of the export directory the caller named
		if err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o600); err != nil {
			return err
		}
	}
	for _, n := range s.Files {
		keep[filepath.Join(dir, FilesDir, n)] = true
	}
	for _, sub := range []string{TypesDir, AttributesDir, ObjectsDir, FilesDir} {
		if err := removeUnkept(dir, sub, keep); err != nil {
			return err
		}
		removeEmptyDirs(filepath.Join(dir, sub))
	}
	return nil
}

// removeUnkept removes the files below dir/sub not in keep, through an
// os.Root on dir so that a symbolic link swapped in during the walk cannot
// lead the removal outside the export directory.
func removeUnkept(dir, sub string, keep map[string]bool) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), sub, func(rel string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || keep[filepath.Join(dir, filepath.FromSlash(rel))] {
			return err
		}
		return root.Remove(rel)
	})
}

// removeEmptyDirs removes the empty folders below root (a type whose
// objects are all gone).
func removeEmptyDirs(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			p := filepath.Join(root, e.Name())
			removeEmptyDirs(p)
			_ = os.Remove(p) // fails unless empty
		}
	}
}

// ReadDir reads an export: the object files of TypesDir, AttributesDir and
// ObjectsDir (each decoded and checked, at most MaxObjects, every GUID
// once) and the names of FilesDir. Anything else in those folders is an
// error; other entries of dir are ignored (a README, .git).
func ReadDir(dir string) (*Set, error) {
	s := &Set{Objects: map[string]Object{}}
	guids := map[string]string{}
	for _, sub := range []string{TypesDir, AttributesDir, ObjectsDir} {
		depth := 1
		if sub == ObjectsDir {
			depth = 2
		}
		err := walkFiles(filepath.Join(dir, sub), depth, func(p string, size int64) error {
			rel := sub + "/" + filepath.ToSlash(strings.TrimPrefix(p, filepath.Join(dir, sub)+string(filepath.Separator)))
			if len(s.Objects) == MaxObjects {
				return fmt.Errorf("more than %d objects", MaxObjects)
			}
			if size > MaxObjectFileBytes {
				return fmt.Errorf("%s: %d bytes, the limit is %d", rel, size, MaxObjectFileBytes)
			}
			b, err := os.ReadFile(p) //nolint:gosec // a file of the export directory the caller named
			if err != nil {
				return err
			}
			o, err := Decode(b)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if path.Base(rel) != o.GUID+".json" {
				return fmt.Errorf("%s: holds object %s: the file is named by the object's guid", rel, o.GUID)
			}
			if other, dup := guids[o.GUID]; dup {
				return fmt.Errorf("%s: object %s is also in %s", rel, o.GUID, other)
			}
			if err := checkKind(sub, o); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			guids[o.GUID] = rel
			s.Objects[rel] = o
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err := walkFiles(filepath.Join(dir, FilesDir), 1, func(p string, _ int64) error {
		n := filepath.Base(p)
		if h := fileHash(n); fileName(h, strings.TrimPrefix(n, h)) != n {
			return fmt.Errorf("%s/%s: a stored file is named <md5 guid>.<extension>", FilesDir, n)
		}
		s.Files = append(s.Files, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(s.Files)
	return s, nil
}

// checkKind checks that o belongs in folder sub by its type.
func checkKind(sub string, o Object) error {
	switch {
	case sub == TypesDir && o.Type != rootName:
		return fmt.Errorf("a type's type is %q, not %q", rootName, o.Type)
	case sub == AttributesDir && o.Type != attributeTypeName:
		return fmt.Errorf("an attribute's type is %q, not %q", attributeTypeName, o.Type)
	case sub == ObjectsDir && (o.Type == rootName || o.Type == attributeTypeName):
		return fmt.Errorf("types and attributes go into %s/ and %s/", TypesDir, AttributesDir)
	}
	return nil
}

// attributeTypeName names type 10 (its ApiIdentifier).
const attributeTypeName = "typeAttribute"

// walkFiles calls f with every regular file exactly depth levels below
// root (none when root does not exist); a folder or file elsewhere is an
// error.
func walkFiles(root string, depth int, f func(p string, size int64) error) error {
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		switch {
		case depth > 1 && e.IsDir():
			if err := walkFiles(p, depth-1, f); err != nil {
				return err
			}
		case depth == 1 && e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				return err
			}
			if err := f(p, info.Size()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected here", p)
		}
	}
	return nil
}
