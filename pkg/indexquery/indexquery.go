// Package indexquery answers the Index group's questions from the indexes
// that pkg/indexwriter writes: objects (search, count, occurrences,
// suggestions, work items, XML link count, matchStrings) and comments
// (search, count, occurrences; comments.go). It translates the NovaDB request
// records into search.Query/SearchRequest values built with pkg/indexwriter's
// encoding helpers, so that writer and reader agree, and runs them on any
// search.Engine (Bleve or Elasticsearch). It has no transport imports:
// services/index maps its records to and from the protos.
//
// Every object answer carries the change-tracking version it reflects
// (comment answers: the comment index's change-tracking timestamp). A request
// with MinVersion waits (at most MaxWait) for the indexer to reach it; on
// timeout it answers with the older version, like NovaDB. A branch that has
// no documents (unknown, or not indexed yet) gives empty results, not an
// error.
package indexquery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Errors. Both wrap a detail a client can act on.
var (
	// ErrInvalid: the request is malformed (HTTP 400).
	ErrInvalid = errkind.New(errkind.Invalid, "invalid request")
	// ErrUnsupported: the request asks for something this implementation
	// cannot answer yet (HTTP 501).
	ErrUnsupported = errkind.New(errkind.Unsupported, "not supported")
)

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Defaults and limits.
const (
	// DefaultMaxWait is the wait for MinVersion when MaxWait is unset.
	DefaultMaxWait = 5 * time.Second
	// MaxWaitLimit caps any requested wait.
	MaxWaitLimit = 60 * time.Second
	// DefaultLanguage is the display-name language when uiLanguage is 0.
	DefaultLanguage = 201
)

// Service answers Index queries. It is safe for concurrent use.
type Service struct {
	eng      search.Engine
	tracking indexdoc.ChangeTracking
	index    string // the objects index
	comments string // the comments index
	langs    []int64
	log      *slog.Logger
	maxWait  time.Duration
	branches Branches
}

// Branches gives the chains of the indexed branches (the branch, then its
// ancestors up to the default branch), which the caller filters of lists
// spanning branches check read grants against (pkg/delivery.Service reads
// them from the index).
type Branches interface {
	AllBranchChains(ctx context.Context) (map[int64][]int64, error)
}

// Options configure a Service.
type Options struct {
	// Layout must be the indexer's (same IndexPrefix and Languages).
	Layout indexdoc.Layout
	// PollInterval is how often read-your-writes waits read the
	// change-tracking state (indexdoc.DefaultPollInterval).
	PollInterval time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
	// Branches resolves branch chains for requests with a Caller who is no
	// administrator; without it such requests count nothing.
	Branches Branches
}

// New returns a Service reading the objects and comments indexes that an
// indexer with the same Layout writes; it reads the engine only.
func New(eng search.Engine, opts Options) (*Service, error) {
	langs := opts.Layout.Langs()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := opts.Layout.IndexPrefix
	s := &Service{eng: eng, tracking: indexdoc.NewChangeTracking(eng, prefix, opts.PollInterval, nil),
		index: prefix + indexdoc.ObjectsIndex, comments: prefix + indexdoc.CommentsIndex,
		langs: langs, log: log, maxWait: MaxWaitLimit, branches: opts.Branches}
	for _, n := range []string{s.index, s.comments} {
		if err := search.ValidIndexName(n); err != nil {
			return nil, fmt.Errorf("indexquery: %w", err)
		}
	}
	return s, nil
}

// Freshness is the read-your-writes part of every request.
type Freshness struct {
	// MinVersion, when set, is the change-tracking version to wait for.
	MinVersion *int64
	// MaxWait is the wire duration ("00:00:05", "PT5S"); empty = default.
	MaxWait string
}

// wait honours f and returns the version the answer reflects.
func (s *Service) wait(ctx context.Context, f Freshness) (int64, error) {
	d := DefaultMaxWait
	if f.MaxWait != "" {
		var err error
		if d, err = ParseDuration(f.MaxWait); err != nil {
			return 0, invalid("maxWaitTime: %v", err)
		}
	}
	d = min(d, s.maxWait)
	if f.MinVersion == nil {
		v, err := s.tracking.Version(ctx)
		return v, err
	}
	v, err := s.tracking.WaitForVersion(ctx, *f.MinVersion, d)
	if errors.Is(err, indexdoc.ErrWaitTimeout) {
		s.log.LogAttrs(ctx, slog.LevelDebug, "indexquery: version not reached",
			slog.Int64("want", *f.MinVersion), slog.Int64("have", v))
		err = nil
	}
	if err != nil {
		return v, err
	}
	// A parked transaction the client asked for is never counted as
	// visible: the answer would lack its changes (indexdoc.ErrParked).
	return v, s.tracking.CheckVisible(ctx, *f.MinVersion)
}

// Wait honours f (waits at most its MaxWait for its MinVersion) and
// returns the version the index has reached; like every query, it does
// not fail when the version is not reached in time.
func (s *Service) Wait(ctx context.Context, f Freshness) (int64, error) { return s.wait(ctx, f) }

// hasLang reports whether lang has its own display-name fields.
func (s *Service) hasLang(lang int64) bool { return slices.Contains(s.langs, lang) }

func uiLang(l int64) int64 {
	if l == 0 {
		return DefaultLanguage
	}
	return l
}

// run searches, treating a missing objects index as "no documents".
func (s *Service) run(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	req.Index = s.index
	res, err := s.eng.Search(ctx, req)
	if errors.Is(err, search.ErrIndexNotFound) {
		res, err = search.SearchResult{Aggs: map[string]search.AggResult{}}, nil
		for _, a := range req.Aggs {
			res.Aggs[a.Key()] = search.AggResult{}
		}
	}
	return res, err
}

func (s *Service) count(ctx context.Context, q search.Query) (int64, error) {
	n, err := s.eng.Count(ctx, s.index, q)
	if errors.Is(err, search.ErrIndexNotFound) {
		return 0, nil
	}
	return n, err
}
