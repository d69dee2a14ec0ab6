package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
)

// tokenKeyFile holds the generated token key in the data directory.
const tokenKeyFile = "auth-token.key" //nolint:gosec // G101: a file name, not a credential

// newTokens returns the bearer-token issuer of the process, or nil (tokens
// off) when there is no key. The key is authTokenKey; without it a
// process on the SQLite store (`cms run`: one installation in one data
// directory) uses the key it generated once into the data directory, so a
// restart keeps the sessions. Processes on PostgreSQL need the shared
// authTokenKey: each would otherwise sign with its own key and refuse the
// others' tokens.
func newTokens(cfg Config, accounts auth.Accounts, log *slog.Logger) (*auth.Tokens, error) {
	key := []byte(cfg.AuthTokenKey)
	if len(key) == 0 {
		if cfg.Store.Engine != EngineSQLite {
			log.Warn("bearer tokens are off: set authTokenKey (CMS_AUTH_TOKEN_KEY), the same in every process")
			return nil, nil
		}
		var err error
		if key, err = dataDirTokenKey(cfg.path(tokenKeyFile)); err != nil {
			return nil, fmt.Errorf("token key: %w", err)
		}
	}
	return auth.NewTokens(key, auth.TokenConfig{Lifetime: cfg.AuthTokenLifetime, SessionMaxAge: cfg.AuthSessionMaxAge},
		accounts, cfg.tokenClock)
}

// dataDirTokenKey reads the key kept at path, or generates it (32 random
// bytes, hex, mode 0600). Concurrent starts agree: the key is written to a
// temporary file and linked into place, which fails if another process
// linked first; that one's key is read then.
func dataDirTokenKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return parseKeyFile(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand never fails on supported platforms
	tmp, err := os.CreateTemp(filepath.Dir(path), tokenKeyFile+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(hex.EncodeToString(raw) + "\n"); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseKeyFile(b)
}

func parseKeyFile(b []byte) ([]byte, error) {
	s := strings.TrimSpace(string(b))
	if len(s) < auth.MinTokenKeyBytes {
		return nil, fmt.Errorf("%s holds %d bytes, want at least %d", tokenKeyFile, len(s), auth.MinTokenKeyBytes)
	}
	return []byte(s), nil
}
