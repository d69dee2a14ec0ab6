package search

import (
	"context"
	"errors"
)

// ErrAliasNotFound means ResolveAlias was asked for a name that is not an alias.
var ErrAliasNotFound = errors.New("search: alias not found")

// Aliaser is the optional alias capability of an Engine (both bundled
// engines have it; find it with a type assertion). An alias is a second
// name for exactly one index: every Engine method given the alias works
// on the index it points at, reads and writes alike, so readers and the
// indexer keep one stable name while a reindex builds a new physical index
// and switches the alias over with no downtime.
//
// An alias and an index never share a name. DeleteIndex takes index names
// only (an alias gives ErrIndexNotFound) and drops the aliases pointing at
// the deleted index.
type Aliaser interface {
	// SwitchAlias points alias at index, creating the alias if needed, in
	// one atomic step: a reader sees either the old target or the new one,
	// never neither. If alias is currently the name of an index (a
	// deployment from before aliases), that index is deleted in the same
	// step so the name can become an alias. It returns the index the alias
	// pointed at before ("" if none or if an index was replaced); deleting
	// it is the caller's business. index must exist (ErrIndexNotFound).
	SwitchAlias(ctx context.Context, alias, index string) (previous string, err error)
	// ResolveAlias returns the index alias points at, or ErrAliasNotFound.
	ResolveAlias(ctx context.Context, alias string) (string, error)
}
