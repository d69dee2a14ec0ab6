package bleve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cmsplatform/cms/pkg/search"
)

var _ search.Aliaser = (*Engine)(nil)

// aliasFile holds the alias → index map of an on-disk engine. It is
// replaced atomically (write to a temporary file, then rename), which is
// what makes SwitchAlias atomic across a crash.
const aliasFile = "aliases.json"

// loadAliases reads the alias map of dir (none yet: empty).
func loadAliases(dir string) (map[string]string, error) {
	out := map[string]string{}
	if dir == "" {
		return out, nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, aliasFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bleve: read aliases: %w", err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("bleve: decode %s: %w", aliasFile, err)
	}
	return out, nil
}

// saveAliasesLocked persists m; the caller holds e.mu.
func (e *Engine) saveAliasesLocked(m map[string]string) error {
	if e.dir == "" {
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("bleve: encode aliases: %w", err)
	}
	tmp := filepath.Join(e.dir, aliasFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("bleve: write aliases: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, aliasFile)); err != nil {
		return fmt.Errorf("bleve: write aliases: %w", err)
	}
	return nil
}

// SwitchAlias implements search.Aliaser.
func (e *Engine) SwitchAlias(_ context.Context, alias, index string) (string, error) {
	if err := search.ValidIndexName(alias); err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, isAlias := e.aliases[index]; isAlias || index == alias {
		return "", fmt.Errorf("%w: %q is an alias", search.ErrIndexNotFound, index)
	}
	if _, err := e.lookupLocked(index); err != nil {
		return "", err
	}
	prev, isAlias := e.aliases[alias]
	next := make(map[string]string, len(e.aliases)+1)
	for k, v := range e.aliases {
		next[k] = v
	}
	next[alias] = index
	if !isAlias {
		// alias may still be the name of a concrete index: replace it.
		if old, err := e.lookupLocked(alias); err == nil {
			delete(e.indexes, alias)
			if err := old.close(); err != nil {
				return "", err
			}
			if err := e.saveAliasesLocked(next); err != nil {
				return "", err
			}
			e.aliases = next
			if e.dir != "" {
				if err := os.RemoveAll(e.path(alias)); err != nil {
					return "", fmt.Errorf("bleve: replace index %q by an alias: %w", alias, err)
				}
			}
			e.log.Info("search index replaced by alias", "alias", alias, "index", index)
			return "", nil
		} else if !errors.Is(err, search.ErrIndexNotFound) {
			return "", err
		}
	}
	if err := e.saveAliasesLocked(next); err != nil {
		return "", err
	}
	e.aliases = next
	e.log.Info("search alias switched", "alias", alias, "index", index, "previous", prev)
	return prev, nil
}

// ResolveAlias implements search.Aliaser.
func (e *Engine) ResolveAlias(_ context.Context, alias string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return "", search.ErrClosed
	}
	if ix, ok := e.aliases[alias]; ok {
		return ix, nil
	}
	return "", fmt.Errorf("%w: %q", search.ErrAliasNotFound, alias)
}

// dropAliasesLocked removes the aliases pointing at index; e.mu is held.
func (e *Engine) dropAliasesLocked(index string) error {
	next := make(map[string]string, len(e.aliases))
	for k, v := range e.aliases {
		if v != index {
			next[k] = v
		}
	}
	if len(next) == len(e.aliases) {
		return nil
	}
	if err := e.saveAliasesLocked(next); err != nil {
		return err
	}
	e.aliases = next
	return nil
}
