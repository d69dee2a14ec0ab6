package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	cachememory "github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/livechanges"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/stylesheets"
	"github.com/cmsplatform/cms/pkg/templates"
	"github.com/cmsplatform/cms/pkg/templates/sandbox"
	"github.com/cmsplatform/cms/pkg/webhooks"
	"github.com/cmsplatform/cms/services/delivery"
	"github.com/cmsplatform/cms/services/index"
	"github.com/cmsplatform/cms/services/indexer"
	"github.com/cmsplatform/cms/services/management"
	"github.com/cmsplatform/cms/services/rendering"
	"github.com/prometheus/client_golang/prometheus"
)

// newAuthenticator returns the process's authenticator: Basic credentials
// behind a one-minute cache, bearer tokens (tokens.go). With a store, users
// are objects in it (pkg/content): the system model is bootstrapped
// (idempotent) and the configured administrator (AdminUser/AdminPassword)
// becomes, or is refreshed as, a user with admin and internal rights; a
// restart with the same configuration writes nothing. Without a store (no
// target of the process needs one) only the configured administrator can
// log in, with Basic credentials only.
func newAuthenticator(ctx context.Context, cfg Config, comps *Components, log *slog.Logger) (*auth.Login, error) {
	if comps.Store == nil {
		b, err := auth.NewBootstrap(cfg.AdminUser, cfg.AdminPassword)
		if err != nil {
			return nil, err
		}
		g := guarded(cfg.Edge, b)
		return auth.NewLogin(auth.NewCached(g, time.Minute, cfg.memory().Share(credentialsShare)), g, nil), nil
	}
	if err := content.Bootstrap(ctx, comps.Store); err != nil {
		return nil, fmt.Errorf("bootstrap the system model: %w", err)
	}
	var login *auth.Login
	// A logout through this service flushes the Basic cache like any
	// other user change.
	users := content.New(comps.Store, log.With("component", "auth"), content.WithUsersChanged(func() {
		if login != nil {
			login.Flush()
		}
	}))
	wrote, err := users.EnsureUser(ctx, content.UserSpec{Name: cfg.AdminUser, Password: cfg.AdminPassword, Admin: true, Internal: true})
	switch {
	case errors.Is(err, content.ErrAmbiguous):
		// Several users carry the name: it cannot log in, but other
		// administrators can still fix the data through the API.
		log.Error("bootstrap administrator not written", "user", cfg.AdminUser, "err", err)
	case err != nil:
		return nil, fmt.Errorf("bootstrap administrator %q: %w", cfg.AdminUser, err)
	}
	if wrote {
		log.Info("bootstrap administrator written to the store", "user", cfg.AdminUser)
	}
	tokens, err := newTokens(cfg, users, log)
	if err != nil {
		return nil, err
	}
	g := guarded(cfg.Edge, users)
	login = auth.NewLogin(auth.NewCached(g, time.Minute, cfg.memory().Share(credentialsShare)), g, tokens)
	return login, nil
}

// guarded puts login throttling and the bound on concurrent password
// checks under the cache: cached credentials never wait for them.
func guarded(e EdgeConfig, a auth.Authenticator) *auth.Guarded {
	return auth.NewGuarded(a, auth.GuardConfig{
		UserFailures: e.LoginUserFailures, AddrFailures: e.LoginAddrFailures, Backoff: e.LoginBackoff,
		MaxBackoff: e.LoginMaxBackoff, MaxTracked: e.LoginTracked, Concurrency: e.PasswordChecks, Wait: e.PasswordCheckWait,
	}, nil)
}

// buildTargets returns the API groups and background workers of the
// configured targets. The indexer has no API, only its consumer loop.
// login is the process's authenticator: the token operations use it, and
// writes that change users flush its Basic cache (other processes see a
// change of rights or password for Basic credentials within the cache TTL,
// for bearer tokens at once: their check reads the store).
func buildTargets(ctx context.Context, cfg Config, comps *Components, log *slog.Logger, reg prometheus.Registerer, login *auth.Login, readyDetail func(func() string), readyCheck func(func() error)) ([]Group, []func(context.Context) error, error) {
	var groups []Group
	var workers []func(context.Context) error
	jw := &jobsWiring{cfg: cfg, comps: comps, log: log}
	usersChanged := login.Flush
	for _, t := range cfg.Targets() {
		switch t {
		case TargetManagement:
			// Management writes; its relay publishes the outbox. Several
			// replicas may run it: one at a time claims (the store's relay
			// lock), the others stand by, so events stay in commit order.
			// Job queue events go to the job queue, the others to the
			// change stream (jobs.Route), both under the events deadline.
			route, err := jw.route(ctx, comps.Events)
			if err != nil {
				return nil, nil, err
			}
			pub := events.PublisherWithDeadline(route, component.Guard{Name: "events", Timeout: cfg.Timeouts.Events})
			relay := outbox.New(comps.Store, pub, outbox.Options{Logger: log.With("worker", "outbox")})
			workers = append(workers, relay.Run)
			registerRelayMetrics(reg, relay)
			jw.relayNotify = relay.Notify
			// The system model (types, attributes, languages, branch 4) is
			// written once, idempotently, in one transaction.
			if err := content.Bootstrap(ctx, comps.Store); err != nil {
				return nil, nil, fmt.Errorf("bootstrap the system model: %w", err)
			}
			st := notifyingStore{Store: comps.Store, notify: relay.Notify}
			opts := []content.Option{content.WithUsersChanged(usersChanged),
				content.WithValueLimits(content.ValueLimits{MaxValueBytes: cfg.MaxValueBytes, MaxRequestValueBytes: cfg.MaxRequestValueBytes}),
				content.WithHistoryRetention(cfg.HistoryRetention)}
			fs := NewFiles(cfg, comps, log)
			if fs != nil {
				workers = append(workers, expireUploads(fs, log.With("worker", "uploads")))
				opts = append(opts, content.WithFileCheck(fs.HashExists))
			}
			svc := content.New(st, log.With("component", "content"), opts...)
			if cfg.HistoryRetention > 0 {
				workers = append(workers, pruneHistory(svc, time.Hour, log.With("worker", "history")))
			}
			mg, err := management.New(management.Options{
				MaxUploadBytes: cfg.MaxUploadBytes, Content: svc, Files: fs, Jobs: jw.service(svc, relay.Notify),
				Webhooks: webhooks.NewHistory(comps.Store), WebhookTests: webhooks.NewTester(comps.Store, cfg.webhookClient()),
				Tokens: login, Logger: log,
			})
			if err != nil {
				return nil, nil, err
			}
			groups = append(groups, mg)
		case TargetDelivery:
			g := delivery.New(delivery.Options{Search: comps.Search, Cache: comps.Cache,
				Layout: cfg.indexing(log).Layout, Files: NewFiles(cfg, comps, log), Logger: log.With("group", "delivery"),
				SourceCacheBytes: cfg.memory().Share(sourceCacheShare),
				ReadWorkers:      cfg.Queries.limit().Concurrent, ReadQueue: cfg.Queries.Queue, ReadWait: cfg.Queries.QueueWait})
			groups = append(groups, g)
			registerDeliveryMetrics(reg, g)
			// Change events evict exactly the cached answers they touch. A
			// shared cache (Redis) is invalidated through one durable
			// consumer for all replicas; a memory cache is per process, so
			// each process reads through an ephemeral consumer of its own
			// from now on (its cache is empty), which the NATS server
			// deletes when the process goes away.
			iv := g.Invalidator(comps.Events, invalidatorDurable(cfg))
			if cfg.Cache.Engine != EngineRedis {
				iv = iv.PerProcess(time.Now())
			}
			workers = append(workers, iv.Run)
			// The change stream: one hub per process, fed by an ephemeral
			// consumer (docs/live-changes.md).
			if hub := g.LiveChanges(liveOptions(cfg, comps)); hub != nil {
				registerLiveMetrics(reg, hub)
				workers = append(workers, hub.Run)
			}
		case TargetRendering:
			// Everything Rendering serves comes from the store: renders,
			// stylesheets and binary proxy objects read the current
			// Management view (a preview shows what was just written), and
			// read grants are checked against the same branch tree.
			g := rendering.New().WithLogger(log.With("group", "rendering"))
			if comps.Store != nil {
				cs := content.New(comps.Store, log.With("component", "content"))
				g.WithBranches(rendering.StoreBranches(cs, log.With("group", "rendering")))
				g.WithFiles(NewFiles(cfg, comps, log), cs)
				// Renders and sheets are cached per process until a
				// change event touches what they read; each process
				// reads every event through an ephemeral consumer of its
				// own.
				rc := renderCache(cfg, comps, log)
				workers = append(workers, rc.Invalidator(comps.Events, "render-invalidator-"+hostName(), comps.Store).Run)
				registerRenderCacheMetrics(reg, rc)
				g.WithStylesheets(stylesheets.New(cs, log.With("group", "rendering")).WithCache(rc))
				g.WithSeparateOrigin(cfg.RenderSeparateOrigin)
				g.WithTemplates(templates.New(cs, templates.Limits{Engine: sandbox.Limits{
					Timeout: cfg.RenderTimeout, MaxOutputBytes: cfg.RenderMaxOutputBytes, MaxRunning: cfg.RenderSlots,
					MaxRunningPerUser: cfg.RenderSlotsPerUser, AdminReserve: reserve(cfg.RenderAdminReserve)}}, log.With("group", "rendering")).WithCache(rc))
			}
			groups = append(groups, g)
		case TargetIndex:
			g, err := index.New(index.Options{Search: comps.Search,
				Layout: cfg.indexing(log).Layout, Logger: log.With("group", "index")})
			if err != nil {
				return nil, nil, fmt.Errorf("index: %w", err)
			}
			groups = append(groups, g)
		case TargetIndexer:
			ix := indexer.New(comps.Events, comps.Store, comps.Search, log.With("worker", "indexer"),
				indexer.Options{Indexing: cfg.indexing(log), Retry: indexwriter.RetryPolicy{MaxAttempts: cfg.IndexerMaxAttempts},
					BatchSize: cfg.IndexerBatchSize})
			workers = append(workers, ix.Run)
			registerIndexerMetrics(reg, ix)
			readyDetail(func() string { return indexerLag(ix.Lag()) })
			readyCheck(ix.Ready)
		case TargetJobs:
			r, err := jw.runner(ctx, usersChanged)
			if err != nil {
				return nil, nil, err
			}
			workers = append(workers, r.Run)
			registerJobMetrics(reg, r, cfg.Timeouts.Ready)
		case TargetWebhooks:
			d := webhooks.New(comps.Store, comps.Events, webhooks.Config{
				Client:   cfg.webhookClient(),
				Retry:    webhooks.RetrySettings{GiveUpAfter: cfg.WebhookGiveUp},
				Record:   webhooks.RecordSettings{Keep: cfg.WebhookKeepAttempts, MaxAge: cfg.WebhookAttemptsMaxAge},
				MaxLanes: cfg.WebhookMaxLanes,
				Logger:   log.With("worker", "webhooks")})
			workers = append(workers, d.Run)
			registerWebhookMetrics(reg, d)
		}
	}
	return groups, workers, nil
}

// webhookClient is how deliveries are sent: by the dispatcher, and the
// test deliveries Management sends.
func (c Config) webhookClient() webhooks.ClientSettings {
	return webhooks.ClientSettings{Timeout: c.WebhookTimeout, MaxResponseBytes: c.WebhookMaxResponseBytes, AllowPrivate: c.WebhookAllowPrivate}
}

// renderCache is the render cache of a rendering target (nil when
// renderCacheMaxBytes is 0): its storage is memory of this process,
// bounded by renderCacheBytes (least recently used first), never the
// shared cache component (each process applies every change event itself).
func renderCache(cfg Config, comps *Components, log *slog.Logger) *rendercache.Cache {
	n := cfg.renderCacheBytes()
	if n <= 0 {
		return nil
	}
	storage := cachememory.New(cachememory.Options{MaxBytes: n})
	return rendercache.New(storage, comps.Store, rendercache.Options{Logger: log.With("component", "rendercache")})
}

// reserve is an administrators' reserve setting for the domain's
// Limits, where 0 takes the default: a setting of 0 means none (-1).
func reserve(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// liveOptions configures the change stream of a delivery target: the
// events it reads and the store it looks the changed objects' types up in.
func liveOptions(cfg Config, comps *Components) delivery.LiveOptions {
	return delivery.LiveOptions{Heartbeat: cfg.Live.Heartbeat, Hub: livechanges.Config{
		Consumer: comps.Events, Buffer: cfg.Live.Buffer, MaxSubscribers: cfg.Live.MaxSubscribers, Retained: cfg.Live.Retained,
		MaxSubscribersPerUser: cfg.Live.MaxSubscribersPerUser, AdminReserve: reserve(cfg.Live.AdminReserve),
		Types: func(ctx context.Context, ev changes.Event) ([]int64, error) {
			touch, err := content.Touched(ctx, comps.Store, ev)
			return touch.Types, err
		},
	}}
}

// indexing is the one place the index layout is configured: the indexer
// writes with it and the read services (Index, Delivery) read with it.
func (c Config) indexing(log *slog.Logger) indexwriter.Options {
	return indexwriter.Options{Logger: log.With("component", "indexing"), MaxIndexedChars: c.MaxIndexedChars}
}

// invalidatorDurable names the Delivery cache invalidator's JetStream
// consumer. A shared cache (Redis) needs each event once across replicas,
// so they share one durable; a per-process memory cache needs every event
// in every process: its consumer is ephemeral, and the host name only
// prefixes its name (the bus adds a random suffix) for operators.
func invalidatorDurable(cfg Config) string {
	if cfg.Cache.Engine == EngineRedis {
		return "delivery-invalidator"
	}
	return "delivery-invalidator-" + hostName()
}

// hostName is the host name as a consumer name may spell it ("local"
// when unknown).
func hostName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "local"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, host)
}
