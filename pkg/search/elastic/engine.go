// Package elastic is the distributed search.Engine on Elasticsearch 8, spoken
// to through go-elasticsearch's transport with hand-built JSON bodies.
//
// Each index is one Elasticsearch index named <prefix><name> with one shard
// (so terms aggregations are exact), a strict mapping translated from
// search.Mapping, and that mapping kept in the index's _meta. Writes use
// external versioning: a stale op fails with a version conflict, which Bulk
// counts as stale. Deletes leave tombstones, but Elasticsearch only keeps them
// for index.gc_deletes (default 60s, see WithGCDeletes): an op older than a
// delete that arrives after that window can recreate the document.
//
// Bulk writes to an index that was deleted between the existence check and
// the write would let Elasticsearch auto-create a dynamically mapped index;
// disable action.auto_create_index for the prefix in production.
package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/cmsplatform/cms/pkg/search"
)

// Engine is a search.Engine over Elasticsearch.
type Engine struct {
	es        *elasticsearch.Client
	transport *http.Transport
	prefix    string
	log       *slog.Logger
	replicas  int
	gcDeletes time.Duration

	mu       sync.Mutex
	mappings map[string]search.Mapping // by full index name
	closed   bool
}

var _ search.Engine = (*Engine)(nil)

// Option configures an Engine.
type Option func(*Engine)

// WithPrefix prefixes every index name (lower case), so that several
// deployments or tests can share a cluster.
func WithPrefix(p string) Option { return func(e *Engine) { e.prefix = p } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// WithReplicas sets number_of_replicas of new indexes (default 0).
func WithReplicas(n int) Option { return func(e *Engine) { e.replicas = n } }

// WithGCDeletes sets index.gc_deletes of new indexes: how long tombstones of
// deleted documents are kept (Elasticsearch's default is 60s).
func WithGCDeletes(d time.Duration) Option { return func(e *Engine) { e.gcDeletes = d } }

// New returns an engine talking to the cluster at url (for example
// http://127.0.0.1:9200; user info in the URL is used for basic auth).
func New(url string, opts ...Option) (*Engine, error) {
	// A connection pool of its own (the client's default is a clone of
	// http.DefaultTransport too), so Close can close its connections.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{url}, Transport: tr})
	if err != nil {
		return nil, fmt.Errorf("elastic: %w", err)
	}
	e := &Engine{es: es, transport: tr, log: slog.New(slog.DiscardHandler), mappings: map[string]search.Mapping{}}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

func (e *Engine) full(name string) string { return e.prefix + name }

// esError is an error body of Elasticsearch.
type esError struct {
	Status int
	Type   string
	Reason string
}

func (err *esError) Error() string {
	return fmt.Sprintf("elastic: status %d: %s: %s", err.Status, err.Type, err.Reason)
}

// Is makes a 503 (e.g. "all shards failed" while a new index's shards
// start) match search.ErrUnavailable, so callers answer 503, not 500.
func (err *esError) Is(target error) bool {
	return target == search.ErrUnavailable && err.Status == http.StatusServiceUnavailable
}

// do sends one request and decodes a 2xx JSON answer into out (if not nil).
// Other statuses become *esError.
func (e *Engine) do(ctx context.Context, method, path string, body []byte, contentType string, out any) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return search.ErrClosed
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return fmt.Errorf("elastic: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	res, err := e.es.Perform(req)
	if err != nil {
		return fmt.Errorf("elastic: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("elastic: %s %s: read: %w", method, path, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var eb struct {
			Error struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &eb)
		if eb.Error.Type == "" {
			eb.Error.Reason = string(raw)
		}
		return &esError{Status: res.StatusCode, Type: eb.Error.Type, Reason: eb.Error.Reason}
	}
	if out == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("elastic: %s %s: decode: %w", method, path, err)
	}
	return nil
}

func (e *Engine) doJSON(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return fmt.Errorf("elastic: encode: %w", err)
		}
	}
	return e.do(ctx, method, path, raw, "application/json", out)
}

func isType(err error, typ string) bool {
	var ee *esError
	return errors.As(err, &ee) && ee.Type == typ
}

func notFound(err error, name string) error {
	if isType(err, "index_not_found_exception") {
		return fmt.Errorf("%w: %q", search.ErrIndexNotFound, name)
	}
	return err
}

// IndexMapping returns the mapping an index (or the index an alias points
// at) was created with, read from its _meta; it never creates anything.
func (e *Engine) IndexMapping(ctx context.Context, name string) (search.Mapping, error) {
	return e.mapping(ctx, name)
}

// mapping returns the mapping of index name, cached after the first read.
func (e *Engine) mapping(ctx context.Context, name string) (search.Mapping, error) {
	if err := search.ValidIndexName(name); err != nil {
		return search.Mapping{}, fmt.Errorf("%w: %q", search.ErrIndexNotFound, name)
	}
	full := e.full(name)
	e.mu.Lock()
	m, ok := e.mappings[full]
	e.mu.Unlock()
	if ok {
		return m, nil
	}
	var res map[string]struct {
		Mappings struct {
			Meta map[string]string `json:"_meta"`
		} `json:"mappings"`
	}
	if err := e.doJSON(ctx, http.MethodGet, "/"+full+"/_mapping", nil, &res); err != nil {
		return search.Mapping{}, notFound(err, name)
	}
	got, ok := res[full]
	if !ok && len(res) == 1 {
		// full is an alias: the answer is keyed by the index it points at.
		for _, v := range res {
			got, ok = v, true
		}
	}
	if !ok || got.Mappings.Meta[metaMapping] == "" {
		return search.Mapping{}, fmt.Errorf("elastic: index %q has no cms mapping in _meta", full)
	}
	m, err := search.UnmarshalMapping([]byte(got.Mappings.Meta[metaMapping]))
	if err != nil {
		return search.Mapping{}, err
	}
	e.mu.Lock()
	e.mappings[full] = m
	e.mu.Unlock()
	return m, nil
}

// EnsureIndex implements search.Engine.
func (e *Engine) EnsureIndex(ctx context.Context, name string, m search.Mapping) error {
	if err := search.ValidIndexName(name); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	body, err := e.createBody(m)
	if err != nil {
		return err
	}
	err = e.doJSON(ctx, http.MethodPut, "/"+e.full(name), body, nil)
	switch {
	case err == nil:
		e.log.Info("search index created", "index", e.full(name))
		return nil
	case !isType(err, "resource_already_exists_exception") && !isType(err, "invalid_index_name_exception"):
		return err
	}
	// The index exists, or name is an alias (invalid_index_name_exception:
	// "already exists as alias"): compare with the mapping it reads.
	if isType(err, "invalid_index_name_exception") {
		if _, aerr := e.ResolveAlias(ctx, name); aerr != nil {
			return err
		}
	}
	have, err := e.mapping(ctx, name)
	if err != nil {
		return err
	}
	if !have.Equal(m) {
		return fmt.Errorf("%w: %q", search.ErrMappingConflict, name)
	}
	return nil
}

// DeleteIndex implements search.Engine.
func (e *Engine) DeleteIndex(ctx context.Context, name string) error {
	if err := search.ValidIndexName(name); err != nil {
		return fmt.Errorf("%w: %q", search.ErrIndexNotFound, name)
	}
	e.mu.Lock()
	delete(e.mappings, e.full(name))
	e.mu.Unlock()
	if err := e.doJSON(ctx, http.MethodDelete, "/"+e.full(name), nil, nil); err != nil {
		if _, aerr := e.ResolveAlias(ctx, name); aerr == nil {
			return fmt.Errorf("%w: %q is an alias", search.ErrIndexNotFound, name)
		}
		return notFound(err, name)
	}
	e.log.Info("search index deleted", "index", e.full(name))
	return nil
}

// Refresh implements search.Engine.
func (e *Engine) Refresh(ctx context.Context, name string) error {
	if _, err := e.mapping(ctx, name); err != nil {
		return err
	}
	return notFound(e.doJSON(ctx, http.MethodPost, "/"+e.full(name)+"/_refresh", nil, nil), name)
}

// Close marks the engine closed; the HTTP client needs no cleanup.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return search.ErrClosed
	}
	e.closed = true
	// Its kept-alive connections would otherwise stay open (each with
	// two goroutines) until the cluster or the idle timeout cut them.
	e.transport.CloseIdleConnections()
	return nil
}

// Ping checks that the cluster answers and is at least yellow. It uses
// _cluster/health: the integration-test distribution CI runs has no
// rest-root module, so GET / (the client's Ping) answers 405 there.
func (e *Engine) Ping(ctx context.Context) error {
	res, err := e.es.Cluster.Health(e.es.Cluster.Health.WithContext(ctx))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.IsError() {
		return fmt.Errorf("elasticsearch cluster health: %s", res.Status())
	}
	var h struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		return fmt.Errorf("elasticsearch cluster health: %w", err)
	}
	if h.Status != "green" && h.Status != "yellow" {
		return fmt.Errorf("elasticsearch cluster is %s", h.Status)
	}
	return nil
}
