// Package content is the domain of the Management group: the NovaDB object
// model (system types, attributes, languages), branches with inheritance,
// identifier resolution, validated writes and projections. It has no gRPC or
// HTTP imports; services/management translates the wire to and from it.
//
// # Storage layout
//
// Objects are stored in pkg/store keyed by (branch, id). System objects and
// all branch objects live on the default branch 4 (BranchDefault). An object
// created on branch B is stored on B; it is visible on B and on every
// descendant of B. The root meta-type 0 is virtual (pkg/store ids are
// positive): identifiers "0" and "root" resolve to it, it is never stored.
//
// # Inheritance
//
// A branch's chain is the branch, its parent (attribute 4000), … up to 4.
// On read, the object row of the nearest branch in the chain wins (so a
// tombstone on a child hides the parent's row there only), and for each
// (attribute, language, variant) the rows of the nearest branch that has any
// row for that key win as a whole (a multi-valued set is overridden as a
// whole). A JSON null row is an override that means "no value" and is never
// returned. Every read uses the store's ChainReader: one query per batch for
// objects and one for values, whatever the depth of the chain.
//
// # Concurrency
//
// Writes are serialised by the store (one write transaction at a time,
// transaction ids increase in commit order). A write touches only the values
// it names, so concurrent writers never lose each other's updates; for the
// same value the last writer in transaction order wins. Checks (uniqueness,
// references, types) run inside the write transaction, so they cannot race.
//
// # Users and permissions
//
// Users are objects of type 110 on branch 4 with a login name (1100), a
// write-only password (1101: clients send plain text, only a bcrypt hash is
// stored, no read ever returns it), an admin flag (1102), an internal-access
// flag (1103) and read/write grants on branches (1104/1105, each covering
// the branch's descendants). Only administrators (Change.Caller.Admin) write users
// and those attributes. Service.Authenticate checks Basic credentials
// against them; accounts.go and security.go hold the details.
package content

import (
	"context"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// Limits of list operations.
const (
	// DefaultTake is the page size when a request gives none.
	DefaultTake = 100
	// MaxTake caps a page.
	MaxTake = 1000
)

// Service is the content domain over one store. It is safe for concurrent
// use; it holds no state besides its dependencies.
type Service struct {
	st           store.Store
	log          *slog.Logger
	usersChanged func()
	limits       ValueLimits
	fileCheck    FileCheck
	// historyRetention is how long object history is kept (0 = for
	// ever): reads and reverts as of an older transaction are refused.
	historyRetention time.Duration
}

// New returns the service. A nil logger discards.
func New(st store.Store, log *slog.Logger, opts ...Option) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{st: st, log: log}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Bootstrap writes the system model (see system.go) into st: all missing
// system objects and their values in one transaction. It is idempotent:
// when nothing is missing it writes nothing. Existing system objects are
// never changed, so local edits survive a restart.
func Bootstrap(ctx context.Context, st store.Store) error {
	return bootstrap(ctx, st)
}
