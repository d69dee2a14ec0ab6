package elastic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cmsplatform/cms/pkg/search"
)

var _ search.Aliaser = (*Engine)(nil)

// SwitchAlias implements search.Aliaser with one _aliases request: remove
// the alias from its old index (or remove the concrete index of that name)
// and add it to the new one. Elasticsearch applies the actions atomically.
func (e *Engine) SwitchAlias(ctx context.Context, alias, index string) (string, error) {
	if err := search.ValidIndexName(alias); err != nil {
		return "", err
	}
	if err := search.ValidIndexName(index); err != nil {
		return "", fmt.Errorf("%w: %q", search.ErrIndexNotFound, index)
	}
	prev, err := e.ResolveAlias(ctx, alias)
	if err != nil && !errors.Is(err, search.ErrAliasNotFound) {
		return "", err
	}
	actions := []map[string]any{}
	if prev == "" {
		// A concrete index of that name (from before aliases) is removed in
		// the same request; without one the action would fail.
		err := e.doJSON(ctx, http.MethodHead, "/"+e.full(alias), nil, nil)
		var ee *esError
		switch {
		case err == nil:
			actions = append(actions, map[string]any{"remove_index": map[string]any{"index": e.full(alias)}})
		case errors.As(err, &ee) && ee.Status == http.StatusNotFound:
		default:
			return "", err
		}
	} else {
		actions = append(actions, map[string]any{"remove": map[string]any{"index": e.full(prev), "alias": e.full(alias)}})
	}
	actions = append(actions, map[string]any{"add": map[string]any{"index": e.full(index), "alias": e.full(alias)}})
	if err := e.doJSON(ctx, http.MethodPost, "/_aliases", map[string]any{"actions": actions}, nil); err != nil {
		if isType(err, "index_not_found_exception") {
			return "", fmt.Errorf("%w: %q", search.ErrIndexNotFound, index)
		}
		return "", err
	}
	e.mu.Lock()
	delete(e.mappings, e.full(alias))
	e.mu.Unlock()
	e.log.Info("search alias switched", "alias", e.full(alias), "index", e.full(index), "previous", prev)
	return prev, nil
}

// ResolveAlias implements search.Aliaser.
func (e *Engine) ResolveAlias(ctx context.Context, alias string) (string, error) {
	if err := search.ValidIndexName(alias); err != nil {
		return "", fmt.Errorf("%w: %q", search.ErrAliasNotFound, alias)
	}
	var res map[string]any
	err := e.doJSON(ctx, http.MethodGet, "/_alias/"+e.full(alias), nil, &res)
	var ee *esError
	switch {
	case errors.As(err, &ee) && ee.Status == http.StatusNotFound:
		return "", fmt.Errorf("%w: %q", search.ErrAliasNotFound, alias)
	case err != nil:
		return "", err
	}
	for full := range res {
		if name, ok := strings.CutPrefix(full, e.prefix); ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: %q", search.ErrAliasNotFound, alias)
}
