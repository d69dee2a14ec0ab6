package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/store"
)

// UserDisplayName returns the user object (type TypeUser on the default
// branch) whose user name (AttrUserName) equals name, compared without
// case, with only its display name values (1000). No match is ErrNotFound,
// several are ErrAmbiguous.
func (s *Service) UserDisplayName(ctx context.Context, name string) (Object, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Object{}, invalidf("user name is empty")
	}
	live := false
	users, err := s.st.ListObjects(ctx, BranchDefault, store.ObjectQuery{TypeIDs: []int64{TypeUser}, Deleted: &live})
	if err != nil {
		return Object{}, err
	}
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	vals, err := s.st.ListValues(ctx, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrUserName}})
	if err != nil {
		return Object{}, err
	}
	var hits []int64
	for _, v := range vals {
		var n string
		if json.Unmarshal(v.JSON, &n) == nil && strings.EqualFold(n, name) {
			hits = append(hits, v.ObjectID)
		}
	}
	switch len(hits) {
	case 0:
		return Object{}, notFoundf("user %q", name)
	case 1:
	default:
		return Object{}, fmt.Errorf("%w: user name %q matches %d users", ErrAmbiguous, name, len(hits))
	}
	objs, err := defaultView(s.st).build(ctx, hits, projection{inherited: true, attributes: map[int64]bool{AttrName: true}})
	if err != nil {
		return Object{}, err
	}
	return objs[0], nil
}
