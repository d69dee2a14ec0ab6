package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/cmsplatform/cms/pkg/blobs"
	blobsfs "github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/cache"
	cachememory "github.com/cmsplatform/cms/pkg/cache/memory"
	cacheredis "github.com/cmsplatform/cms/pkg/cache/redis"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/search"
	searchbleve "github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// Components are the open components of this process; a field is nil when
// no target of the process needs it.
type Components struct {
	Store  store.Store
	Events *natsjs.Bus
	Search search.Engine
	Cache  cache.Cache
	Blobs  blobs.Store

	// bleve is the embedded search engine when it is the one in use (its
	// column index reports to the metrics).
	bleve   *searchbleve.Engine
	closers []namedCloser
	pings   []namedPing
}

type namedCloser struct {
	name  string
	close func() error
}

type namedPing struct {
	name string
	ping func(context.Context) error
}

// OpenComponents opens what the configured targets need, in dependency
// order (events before blobs, which may live in the NATS object store). On
// error everything opened so far is closed again.
func OpenComponents(ctx context.Context, cfg Config, log *slog.Logger) (_ *Components, err error) {
	want := map[string]bool{}
	for _, n := range []string{"store", "events", "search", "cache", "blobs"} {
		want[n] = cfg.uses(n)
	}
	if cfg.Store.Engine == EngineSQLite || cfg.Events.Engine == EngineEmbeddedNATS ||
		cfg.Search.Engine == EngineBleve || cfg.Blobs.Engine == EngineFS {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	c := &Components{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	steps := []struct {
		name string
		open func(context.Context, Config, *slog.Logger) error
	}{
		{"store", c.openStore}, {"events", c.openEvents}, {"search", c.openSearch},
		{"cache", c.openCache}, {"blobs", c.openBlobs},
	}
	for _, s := range steps {
		if !want[s.name] {
			continue
		}
		if err := s.open(ctx, cfg, log.With("component", s.name)); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return c, nil
}

func (c *Components) add(name string, closeFn func() error, ping func(context.Context) error) {
	c.closers = append(c.closers, namedCloser{name, closeFn})
	if ping != nil {
		c.pings = append(c.pings, namedPing{name, ping})
	}
}

func (c *Components) openStore(ctx context.Context, cfg Config, log *slog.Logger) error {
	var err error
	switch cfg.Store.Engine {
	case EngineSQLite:
		var s *sqlite.Store
		s, err = sqlite.Open(ctx, cfg.path("cms.db"), store.WithLogger(log))
		c.Store = s
	case EnginePostgres:
		var s *postgres.Store
		s, err = postgres.Open(ctx, cfg.Store.URL, store.WithLogger(log))
		c.Store = s
	}
	if err != nil {
		c.Store = nil
		return err
	}
	c.Store = store.WithDeadline(c.Store, component.Guard{Name: "store", Timeout: cfg.Timeouts.Store})
	c.add("store", c.Store.Close, c.Store.Ping)
	return nil
}

func (c *Components) openEvents(ctx context.Context, cfg Config, log *slog.Logger) error {
	var err error
	switch cfg.Events.Engine {
	case EngineEmbeddedNATS:
		c.Events, err = natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: cfg.path("nats"), Logger: log,
			MaxMemory: cfg.memory().Share(natsMemoryShare)})
	case EngineNATS:
		c.Events, err = natsjs.Connect(ctx, cfg.Events.URL, natsjs.Options{Logger: log, Name: "cms-" + cfg.Target,
			Stream: events.StreamConfig{Namespace: cfg.Events.Prefix}})
	}
	if err != nil {
		return err
	}
	bus := c.Events
	c.add("events", bus.Close, func(context.Context) error {
		if !bus.Conn().IsConnected() {
			return errors.New("not connected to NATS")
		}
		return nil
	})
	return nil
}

func (c *Components) openSearch(ctx context.Context, cfg Config, log *slog.Logger) error {
	var err error
	switch cfg.Search.Engine {
	case EngineBleve:
		var e *searchbleve.Engine
		e, err = searchbleve.New(cfg.path("bleve"), searchbleve.WithLogger(log),
			searchbleve.WithDocCacheBytes(cfg.memory().Share(docCacheShare)),
			searchbleve.WithColumnBudget(cfg.searchColumnsBytes()))
		c.Search, c.bleve = e, e
	case EngineElasticsearch:
		var e *elastic.Engine
		e, err = elastic.New(cfg.Search.URL, elastic.WithPrefix(cfg.Search.Prefix), elastic.WithLogger(log))
		c.Search = e
	}
	if err != nil {
		c.Search = nil
		return err
	}
	c.Search = search.WithDeadline(search.WithQueryLimit(c.Search, cfg.Queries.limit()),
		component.Guard{Name: "search", Timeout: cfg.Timeouts.Search})
	c.add("search", c.Search.Close, c.Search.(interface{ Ping(context.Context) error }).Ping)
	return nil
}

func (c *Components) openCache(ctx context.Context, cfg Config, log *slog.Logger) error {
	var err error
	switch cfg.Cache.Engine {
	case EngineMemory:
		c.Cache = cachememory.New(cachememory.Options{MaxBytes: cfg.memory().Share(cacheShare)})
	case EngineRedis:
		var r *cacheredis.Cache
		r, err = cacheredis.Open(ctx, cfg.Cache.URL, cfg.Cache.Prefix)
		if err != nil && component.Unreachable(err) {
			// Delivery serves uncached while Redis is away, from the start too.
			log.Warn("redis unreachable; starting without the cache until it answers", "err", err)
			r, err = cacheredis.Dial(cfg.Cache.URL, cfg.Cache.Prefix)
		}
		c.Cache = r
	}
	if err != nil {
		c.Cache = nil
		return err
	}
	// The in-memory cache answers without I/O and ignores its context: a
	// deadline would only cost a timer per call (four per uncached
	// Delivery read), so only Redis gets timeouts.cache.
	timeout := cfg.Timeouts.Cache
	if cfg.Cache.Engine == EngineMemory {
		timeout = 0
	}
	c.Cache = cache.WithDeadline(c.Cache, component.Guard{Name: "cache", Timeout: timeout})
	c.add("cache", c.Cache.Close, c.Cache.(interface{ Ping(context.Context) error }).Ping)
	return nil
}

func (c *Components) openBlobs(ctx context.Context, cfg Config, log *slog.Logger) error {
	var err error
	switch cfg.Blobs.Engine {
	case EngineFS:
		var s *blobsfs.Store
		s, err = blobsfs.New(cfg.path("blobs"), blobsfs.Options{Logger: log})
		c.Blobs = s
	case EngineNATSObjects:
		var s *natsobj.Store
		s, err = natsobj.New(ctx, c.Events.JetStream(), natsobj.Options{Bucket: natsobj.BucketName(cfg.Blobs.Prefix), Logger: log})
		c.Blobs = s
	}
	if err != nil {
		c.Blobs = nil
		return err
	}
	c.add("blobs", func() error { return nil }, nil)
	return nil
}

// Ping checks every open component; the error names the failing ones.
func (c *Components) Ping(ctx context.Context) error {
	var errs []error
	for _, p := range c.pings {
		if err := p.ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// Close closes the components in reverse order of opening.
func (c *Components) Close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		_ = c.closers[i].close()
	}
	c.closers = nil
}
