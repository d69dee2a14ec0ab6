package content

import (
	"context"
	"encoding/json"
)

// AttrFileExtension is a binary proxy object's file extension (with or
// without the dot), next to AttrFileHash.
const AttrFileExtension = 11005

// BinaryProxy is the file a binary proxy object names, as stored.
type BinaryProxy struct {
	ID int64
	// Hash is the MD5 as stored (GUID or 32-hex form).
	Hash string
	// Ext is the extension as stored (with or without the dot).
	Ext string
}

// BinaryProxy reads the binary proxy object id (an id, GUID or
// ApiIdentifier; ErrAmbiguous when it names several objects) on branch in
// the current view (values inherited along the branch chain). A deleted
// object, a user and an object without a file hash are not found: they
// are no binary proxy objects.
func (s *Service) BinaryProxy(ctx context.Context, branch, id string) (BinaryProxy, error) {
	o, err := s.GetObject(ctx, branch, id, ReadOptions{Inherited: true})
	if err != nil {
		return BinaryProxy{}, err
	}
	bp := BinaryProxy{ID: o.ID}
	for _, v := range o.Values {
		var text string
		if v.Language != 0 || v.Variant != 0 || v.Attribute != AttrFileHash && v.Attribute != AttrFileExtension || json.Unmarshal(v.JSON, &text) != nil {
			continue
		}
		if v.Attribute == AttrFileHash {
			bp.Hash = text
		} else {
			bp.Ext = text
		}
	}
	if o.Deleted || o.TypeID == TypeUser || bp.Hash == "" {
		return BinaryProxy{}, notFoundf("object %q on branch %s has no file (attribute %d)", id, branch, AttrFileHash)
	}
	return bp, nil
}
