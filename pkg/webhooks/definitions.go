package webhooks

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// Definition is one webhook: a type-210 object of the default branch.
type Definition struct {
	ID       int64
	URL      string
	Secret   []byte
	Branches []int64  // empty = every branch
	Types    []int64  // empty = every type
	Kinds    []string // empty = every kind
	Enabled  bool
	// CreatedTx is the transaction that created the definition: events of
	// earlier transactions never go to it.
	CreatedTx int64
}

// LoadDefinitions reads every live webhook definition straight from the
// store (the content service never returns the secret).
func LoadDefinitions(ctx context.Context, st store.Store) ([]Definition, error) {
	no := false
	objs, err := st.ListObjects(ctx, content.BranchDefault, store.ObjectQuery{TypeIDs: []int64{content.TypeWebHookDefinition}, Deleted: &no})
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(objs))
	for i, o := range objs {
		ids[i] = o.ID
	}
	vals, err := st.ListValues(ctx, content.BranchDefault, ids, store.ValueFilter{AttributeIDs: definitionAttributes})
	if err != nil {
		return nil, err
	}
	byID := map[int64]*Definition{}
	out := make([]Definition, len(objs))
	for i, o := range objs {
		out[i].ID, out[i].CreatedTx = o.ID, o.CreatedTx
		byID[o.ID] = &out[i]
	}
	for _, v := range vals {
		if d := byID[v.ObjectID]; d != nil {
			d.fill(v)
		}
	}
	return out, nil
}

// definitionAttributes are the attributes a Definition is read from.
var definitionAttributes = []int64{content.AttrWebHookURL, content.AttrWebHookSecret, content.AttrWebHookBranches,
	content.AttrWebHookTypes, content.AttrWebHookKinds, content.AttrWebHookEnabled}

// fill sets the field of d that value v of the definition holds.
func (d *Definition) fill(v store.Value) {
	var s string
	var n int64
	var b bool
	switch v.AttributeID {
	case content.AttrWebHookURL:
		if json.Unmarshal(v.JSON, &s) == nil {
			d.URL = s
		}
	case content.AttrWebHookSecret:
		if json.Unmarshal(v.JSON, &s) == nil {
			d.Secret = []byte(s)
		}
	case content.AttrWebHookBranches:
		if json.Unmarshal(v.JSON, &n) == nil {
			d.Branches = append(d.Branches, n)
		}
	case content.AttrWebHookTypes:
		if json.Unmarshal(v.JSON, &n) == nil {
			d.Types = append(d.Types, n)
		}
	case content.AttrWebHookKinds:
		if json.Unmarshal(v.JSON, &s) == nil {
			d.Kinds = append(d.Kinds, s)
		}
	case content.AttrWebHookEnabled:
		if json.Unmarshal(v.JSON, &b) == nil {
			d.Enabled = b
		}
	}
}

// Matches reports whether ev (touching objects of types objTypes) goes to
// d: enabled, with a URL, and passing each non-empty filter.
func (d Definition) Matches(ev changes.Event, objTypes []int64) bool {
	if !d.Enabled || d.URL == "" {
		return false
	}
	if len(d.Branches) > 0 && !slices.Contains(d.Branches, ev.Branch) {
		return false
	}
	if len(d.Kinds) > 0 && !slices.Contains(d.Kinds, ev.Kind) {
		return false
	}
	if len(d.Types) > 0 && !slices.ContainsFunc(objTypes, func(t int64) bool { return slices.Contains(d.Types, t) }) {
		return false
	}
	return true
}
