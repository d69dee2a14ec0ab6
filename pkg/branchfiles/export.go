package branchfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
)

// ExportResult says what an export wrote.
type ExportResult struct {
	Types, Attributes, Objects int
	// Files are the stored files the objects name; Downloaded of them
	// were not in the directory yet.
	Files, Downloaded int
}

// Export writes what branch shows (inherited values included) into dir:
// one file per custom type, attribute and object (the system model, the
// branches, users and webhook definitions stay out; so do deleted
// objects), and the stored file of every binary proxy object. Files of
// objects no longer on the branch are removed, so dir mirrors the branch.
func Export(ctx context.Context, c *Client, branch, dir string) (ExportResult, error) {
	var res ExportResult
	snap, err := read(ctx, c, branch)
	if err != nil {
		return res, err
	}
	set, err := snap.set()
	if err != nil {
		return res, err
	}
	for p := range set.Objects {
		switch sub, _, _ := strings.Cut(p, "/"); sub {
		case TypesDir:
			res.Types++
		case AttributesDir:
			res.Attributes++
		default:
			res.Objects++
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, FilesDir), 0o750); err != nil {
		return res, err
	}
	for _, n := range set.Files {
		fresh, err := fetchFile(ctx, c, filepath.Join(dir, FilesDir), n)
		if err != nil {
			return res, fmt.Errorf("file %s: %w", n, err)
		}
		if fresh {
			res.Downloaded++
		}
	}
	res.Files = len(set.Files)
	return res, set.write(dir)
}

// set is the export of the snapshot.
func (s *snapshot) set() (*Set, error) {
	set := &Set{Objects: map[string]Object{}}
	files := map[string]bool{}
	for _, po := range s.objects {
		o := *po
		if !s.exported(o) {
			continue
		}
		if len(set.Objects) == MaxObjects {
			return nil, fmt.Errorf("the branch holds more than %d objects to export", MaxObjects)
		}
		p, err := s.portable(o)
		if err != nil {
			return nil, err
		}
		typeGUID := ""
		if t, ok := s.byID[o.typeRef()]; ok {
			typeGUID = t.Meta.GUID
		}
		set.Objects[objectPath(p, o.typeRef(), typeGUID)] = p
		if n := binaryFile(o); n != "" {
			files[n] = true
		}
	}
	for n := range files {
		set.Files = append(set.Files, n)
	}
	sort.Strings(set.Files)
	return set, nil
}

// binaryFile is the name under FilesDir of the file a binary proxy object
// names (attributes 11000 and 11005), "" for other objects.
func binaryFile(o apiObject) string {
	var hash, ext string
	for _, v := range o.Values {
		if v.Language != 0 || v.Variant != 0 {
			continue
		}
		switch v.Attribute {
		case content.AttrFileHash:
			_ = json.Unmarshal(v.Value, &hash)
		case content.AttrFileExtension:
			_ = json.Unmarshal(v.Value, &ext)
		}
	}
	if hash == "" {
		return ""
	}
	return fileName(hash, ext)
}

// fetchFile downloads the stored file n into dir unless a file of that
// content is there already; fresh says it downloaded.
func fetchFile(ctx context.Context, c *Client, dir, n string) (fresh bool, err error) {
	p := filepath.Join(dir, n)
	f, err := os.Open(p) //nolint:gosec // a file of the export directory the caller named
	if err == nil {
		g, err := md5GUID(f)
		_ = f.Close()
		if err == nil && g == fileHash(n) {
			return false, nil
		}
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return false, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := c.download(ctx, n, tmp); err != nil {
		_ = tmp.Close()
		return false, err
	}
	if _, err := tmp.Seek(0, 0); err != nil {
		_ = tmp.Close()
		return false, err
	}
	g, err := md5GUID(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if g != fileHash(n) {
		return false, fmt.Errorf("downloaded content has MD5 %s", g)
	}
	return true, os.Rename(tmp.Name(), p)
}
