package delivery

import (
	"encoding/json"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
)

// # The file props of binary proxy objects
//
// NovaDB's Delivery answers give a BPO externalBinaryFileName,
// externalBinaryMediaType and externalBinaryThumbnail besides the stored
// hash and extension. An object with a file hash (11000) gets each of them
// that it does not store, derived by model.DeriveBinaryProps, wherever the
// props mode admits the attribute or the hash (they go with it, so a type
// whose forms list only 11000 and 11005 carries them too). Resolving
// externalBinaryMediaType follows the derived reference.

// derivedFileAttrs are the attributes binaryProps may derive.
var derivedFileAttrs = []int64{model.AttrFileName, model.AttrFileMediaType, model.AttrFileThumbnail}

// fileProps returns the derived file props of src (nil when it names no
// file), keyed by attribute id.
func (v view) fileProps(src indexdoc.Source, displayName string) map[int64]any {
	text := func(attr int64) string {
		vals := v.selected(src.Values, attr)
		if len(vals) == 0 {
			return ""
		}
		var s string
		_ = json.Unmarshal(vals[0].Value, &s)
		return s
	}
	p, ok := model.DeriveBinaryProps(model.BinaryFile{ID: src.ID, Hash: text(model.AttrFileHash),
		Ext: text(model.AttrFileExtension), Name: text(model.AttrFileName), DisplayName: displayName})
	if !ok {
		return nil
	}
	out := map[int64]any{model.AttrFileName: p.FileName, model.AttrFileMediaType: p.MediaType}
	if p.Thumbnail != 0 {
		out[model.AttrFileThumbnail] = p.Thumbnail
	}
	return out
}

// addFileProps adds the derived file props of src to o.Props (after the
// stored ones: a stored value wins).
func (v view) addFileProps(o *Object, src indexdoc.Source, t *objType) {
	if v.props == PropsNone {
		return
	}
	derived := v.fileProps(src, o.DisplayName)
	for _, id := range derivedFileAttrs {
		val, ok := derived[id]
		a := v.m.attrs[id]
		if !ok || a == nil || a.api == "" {
			continue
		}
		if _, stored := o.Props[a.api]; stored {
			continue
		}
		if v.props == PropsType && t != nil && t.apiAttrs != nil && !t.apiAttrs[id] && !t.apiAttrs[model.AttrFileHash] {
			continue
		}
		o.Props[a.api] = val
	}
}

// derivedRefs returns the derived reference of attr (the media type or the
// thumbnail) for resolve when src stores none.
func (v view) derivedRefs(src indexdoc.Source, attr int64) []int64 {
	if attr != model.AttrFileMediaType && attr != model.AttrFileThumbnail || len(v.selected(src.Values, attr)) > 0 {
		return nil
	}
	if id, ok := v.fileProps(src, "")[attr].(int64); ok {
		return []int64{id}
	}
	return nil
}
