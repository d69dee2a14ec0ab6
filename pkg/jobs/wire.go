package jobs

import (
	"encoding/json"

	"github.com/cmsplatform/cms/pkg/content"
)

// wireObject is an object in the CMS wire shape (CmsObject): exports
// write it and imports read it, so an export can be imported again.
type wireObject struct {
	Meta   wireMeta    `json:"meta"`
	Values []wireValue `json:"values"`
}

type wireMeta struct {
	ID              int64   `json:"id,omitempty"`
	GUID            string  `json:"guid,omitempty"`
	APIIdentifier   *string `json:"apiIdentifier,omitempty"`
	TypeRef         int64   `json:"typeRef"`
	LastTransaction int64   `json:"lastTransaction,omitempty"`
	Deleted         bool    `json:"deleted,omitempty"`
}

type wireValue struct {
	Attribute   int64           `json:"attribute"`
	Variant     int64           `json:"variant"`
	Language    int64           `json:"language"`
	Value       json.RawMessage `json:"value"`
	SortReverse *int64          `json:"sortReverse,omitempty"`
	UnitRef     *int64          `json:"unitRef,omitempty"`
}

func toWire(o content.Object) wireObject {
	w := wireObject{Meta: wireMeta{ID: o.ID, GUID: o.GUID, TypeRef: o.TypeID, LastTransaction: o.LastTransaction,
		Deleted: o.Deleted}, Values: make([]wireValue, 0, len(o.Values))}
	if o.APIIdentifier != "" {
		api := o.APIIdentifier
		w.Meta.APIIdentifier = &api
	}
	for _, v := range o.Values {
		sr := v.SortReverse
		w.Values = append(w.Values, wireValue{Attribute: v.Attribute, Variant: v.Variant, Language: v.Language,
			Value: json.RawMessage(v.JSON), SortReverse: &sr, UnitRef: v.UnitRef})
	}
	return w
}

func (w wireObject) input() content.ObjectInput {
	in := content.ObjectInput{ID: w.Meta.ID, GUID: w.Meta.GUID, APIIdentifier: w.Meta.APIIdentifier,
		TypeID: w.Meta.TypeRef, Values: make([]content.ValueInput, 0, len(w.Values))}
	for _, v := range w.Values {
		val := v.Value
		if val == nil {
			val = json.RawMessage("null")
		}
		in.Values = append(in.Values, content.ValueInput{Attribute: v.Attribute, Language: v.Language,
			Variant: v.Variant, SortReverse: v.SortReverse, UnitRef: v.UnitRef, JSON: val})
	}
	return in
}
