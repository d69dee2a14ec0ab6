package content

import (
	"context"
	"fmt"
	"strings"
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
	hits, err := findUsers(ctx, s.st, name)
	if err != nil {
		return Object{}, err
	}
	switch len(hits) {
	case 0:
		return Object{}, notFoundf("user %q", name)
	case 1:
	default:
		return Object{}, fmt.Errorf("%w: user name %q matches %d users", ErrAmbiguous, name, len(hits))
	}
	objs, err := defaultView(s.st).build(ctx, []int64{hits[0].id}, projection{inherited: true, attributes: map[int64]bool{AttrName: true}})
	if err != nil {
		return Object{}, err
	}
	return objs[0], nil
}
