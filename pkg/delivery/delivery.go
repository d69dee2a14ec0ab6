// Package delivery is the domain of the Delivery group: it renders the
// published, indexed view of a branch in NovaDB's Delivery shape. It reads
// only the search index written by pkg/indexwriter (no store: in distributed
// mode the delivery target has none): object documents carry their
// resolved state in indexdoc.FieldSource, and the meta-model (types,
// attributes, languages, forms) is loaded from the same index, as system
// objects are objects too.
//
// Rendering follows docs/api-reference.md §7: props keyed by attribute
// ApiIdentifier (scalars as-is, multi-valued attributes as arrays, ObjRefs
// as ids, SimpleHtml as {"XML":…}, empty values omitted), one value per
// attribute chosen along the language fallback chain (lang, its 2002
// fallbacks, then language-independent), and refs resolved level by level
// with one batched multi-get per level, de-duplicated and capped.
package delivery

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Errors. Callers map them to transport codes with errors.Is.
var (
	// ErrNotFound: the branch, type or object does not exist in the index.
	ErrNotFound = errkind.New(errkind.NotFound, "not found")
	// ErrInvalidArgument: a parameter is malformed (filter, sort, paging,
	// language, variants).
	ErrInvalidArgument = errkind.New(errkind.Invalid, "invalid argument")
	// ErrAmbiguous: an ApiIdentifier names more than one object.
	ErrAmbiguous = errkind.New(errkind.Ambiguous, "the object id is not unique")
)

// Limits.
const (
	// DefaultResolveDepth is used when a request does not set resolveDepth.
	DefaultResolveDepth = 100
	// MaxRefs caps the refs of one response; resolving stops there.
	MaxRefs = 5000
)

// Options configure a Service.
type Options struct {
	// Search is the engine the indexer writes (required).
	Search search.Engine
	// Layout must be the indexer's (IndexPrefix names the indexes,
	// Languages the per-language display-name fields).
	Layout indexdoc.Layout
	// SourceCacheBytes bounds the memory of the decoded stored sources
	// the Service keeps and of the objects it rendered from them, a
	// quarter of it (objectCache; default DefaultSourceCacheBytes).
	SourceCacheBytes int64
	// Logger; nil discards.
	Logger *slog.Logger
}

// Service answers Delivery requests from the index. It is safe for
// concurrent use.
type Service struct {
	eng      search.Engine
	log      *slog.Logger
	objects  string
	tracking indexdoc.ChangeTracking
	branches indexdoc.Branches
	langs    map[int64]bool // languages with display-name fields
	sources  *sourceCache   // decoded FieldSource by (id, version)
	rendered *objectCache   // rendered objects by source, model and view
	// ids are the branch ids of the current version (version.go).
	ids branchIDs

	mu     sync.Mutex
	models map[int64]*branchModel // per branch, for one index version
	// loads coalesces concurrent loads of one branch's model (a burst
	// of requests after a change reads the model once).
	loads singleflight.Group
}

// New returns a Service.
func New(opts Options) (*Service, error) {
	if opts.Search == nil {
		return nil, fmt.Errorf("delivery: a search engine is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SourceCacheBytes <= 0 {
		opts.SourceCacheBytes = DefaultSourceCacheBytes
	}
	langs := opts.Layout.Languages
	if langs == nil {
		langs = indexdoc.DefaultLanguages
	}
	s := &Service{eng: opts.Search, log: opts.Logger,
		objects:  opts.Layout.IndexPrefix + indexdoc.ObjectsIndex,
		tracking: indexdoc.NewChangeTracking(opts.Search, opts.Layout.IndexPrefix, waitPoll, nil),
		branches: indexdoc.NewBranches(opts.Search, opts.Layout.IndexPrefix),
		langs:    map[int64]bool{}, models: map[int64]*branchModel{},
		sources: newSourceCache(opts.SourceCacheBytes - opts.SourceCacheBytes/4), rendered: newObjectCache(opts.SourceCacheBytes / 4)}
	for _, l := range langs {
		s.langs[l] = true
	}
	return s, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// branchNotFound is the ErrNotFound of a branch that does not exist (in
// the index): lists answer it with no objects (UnknownBranch).
type branchNotFound struct{ param string }

func (e *branchNotFound) Error() string { return fmt.Sprintf("%v: branch %q", ErrNotFound, e.param) }
func (e *branchNotFound) Unwrap() error { return ErrNotFound }

func unknownBranch(param string) error { return &branchNotFound{param: param} }

// UnknownBranch reports whether err says that the branch asked for does
// not exist. Lists, counts, occurrences and suggestions answer such a
// branch with nothing, not with ErrNotFound, so that a caller who may not
// read a branch (answered as for one that does not exist,
// services/internal/interceptors.NoBranch) cannot tell which branches exist.
func UnknownBranch(err error) bool {
	var b *branchNotFound
	return errors.As(err, &b)
}

// unknownBranchTags are the cache tags of the empty answer for a branch
// that does not exist: evicted when a branch object changes (it may be
// the one created under this id or ApiIdentifier).
func unknownBranchTags(param string) []string {
	tags := []string{BranchesTag}
	if id, err := strconv.ParseInt(strings.TrimSpace(param), 10, 64); err == nil {
		tags = append(tags, ModelTag(id))
	}
	return tags
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}
