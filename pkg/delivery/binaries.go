package delivery

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
)

// Attributes of a binary proxy object (a BPO: an object of a type with
// 5009 = true) naming its file: the content's MD5 and the extension.
const (
	AttrFileHash      = content.AttrFileHash
	AttrFileExtension = content.AttrFileExtension
)

// BinaryProxy is the file a binary proxy object names.
type BinaryProxy struct {
	ID int64
	// Hash is the MD5 as stored (GUID or 32-hex form).
	Hash string
	// Ext is the extension as stored (with or without the dot).
	Ext string
}

// BinaryProxy reads the binary proxy object id (an id or ApiIdentifier;
// ErrAmbiguous when it names several objects) on branch. An object without
// a file hash is not found: it is no binary proxy object.
func (s *Service) BinaryProxy(ctx context.Context, branch, id string) (BinaryProxy, error) {
	if _, err := content.ParseIdent(id); err != nil {
		return BinaryProxy{}, invalidf("id: %v", strings.TrimPrefix(err.Error(), content.ErrInvalid.Error()+": "))
	}
	sc, err := s.scope(ctx, Request{Branch: branch})
	if err != nil {
		return BinaryProxy{}, err
	}
	src, err := s.find(ctx, sc, id, false)
	if err != nil {
		return BinaryProxy{}, err
	}
	bp := BinaryProxy{ID: src.ID}
	for _, v := range src.Values {
		var text string
		if v.Attr != AttrFileHash && v.Attr != AttrFileExtension || json.Unmarshal(v.Value, &text) != nil {
			continue
		}
		if v.Attr == AttrFileHash {
			bp.Hash = text
		} else {
			bp.Ext = text
		}
	}
	if bp.Hash == "" {
		return BinaryProxy{}, notFoundf("object %q on branch %d has no file (attribute %d)", id, sc.branch, AttrFileHash)
	}
	return bp, nil
}
