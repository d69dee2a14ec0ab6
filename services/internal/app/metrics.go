package app

import (
	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/livechanges"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/responsecache"
	"github.com/cmsplatform/cms/services/delivery"
	"github.com/cmsplatform/cms/services/indexer"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/prometheus/client_golang/prometheus"
)

// The pipeline's Prometheus metrics, besides the per-call gRPC metrics of
// the interceptors: the outbox relay, the indexer and the Delivery caches
// of the targets this process runs. Each reads the component's own
// counters at scrape time.

func registerRelayMetrics(reg prometheus.Registerer, r *outbox.Relay) {
	reg.MustRegister(
		counterFunc("cms_outbox_published_total", "Change events the outbox relay published.", func() int64 { return r.Stats().Published }),
		counterFunc("cms_outbox_publish_failures_total", "Failed publish attempts of the outbox relay (retried).", func() int64 { return r.Stats().PublishFailures }))
}

func registerIndexerMetrics(reg prometheus.Registerer, ix *indexer.Service) {
	events := func(result string, f func(indexer.Stats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_indexer_events_total",
			"Change events the indexer handled, by result (applied, failed and retried, dropped as malformed, parked after failed attempts).",
			prometheus.Labels{"result": result}, func() int64 { return f(ix.Stats()) })
	}
	reg.MustRegister(
		events("applied", func(s indexer.Stats) int64 { return s.Applied }),
		events("failed", func(s indexer.Stats) int64 { return s.Failed }),
		events("dropped", func(s indexer.Stats) int64 { return s.Dropped }),
		events("parked", func(s indexer.Stats) int64 { return s.Parked }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cms_indexer_apply_seconds_total",
			Help: "Time the indexer spent applying change events."}, func() float64 { return ix.Stats().ApplySeconds }),
		counterFunc("cms_indexer_batches_total", "Batches of change events the indexer applied in one pass.", func() int64 { return ix.Stats().Batches }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_indexer_parked_events",
			Help: "Change events in the durable parked list now (their changes are missing from the index until retried; -1 before the indexer read the list)."},
			func() float64 { return float64(ix.Stats().ParkedNow) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_indexer_lag_events",
			Help: "Change events not yet applied: pending in the indexer's consumer plus those being applied."},
			func() float64 { return float64(ix.Lag().Events) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_indexer_lag_seconds",
			Help: "Age of the oldest change event not yet applied (0 when caught up)."},
			func() float64 { return ix.Lag().Seconds }))
}

func registerDeliveryMetrics(reg prometheus.Registerer, g *delivery.Group) {
	answers := func(layer, result string, f func(responsecache.Stats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_delivery_cache_requests_total",
			"Delivery requests by cache layer (http in front of the gateway, grpc behind it) and result.",
			prometheus.Labels{"layer": layer, "result": result}, func() int64 { return f(g.Stats()) })
	}
	reg.MustRegister(
		answers("http", "hit", func(s responsecache.Stats) int64 { return s.HTTPHits }),
		answers("http", "not_modified", func(s responsecache.Stats) int64 { return s.HTTPNotModified }),
		answers("http", "miss", func(s responsecache.Stats) int64 { return s.HTTPMisses }),
		answers("grpc", "hit", func(s responsecache.Stats) int64 { return s.Hits }),
		answers("grpc", "miss", func(s responsecache.Stats) int64 { return s.Misses }),
		counterFunc("cms_delivery_cache_shared_builds_total", "Delivery cache misses answered by an identical concurrent build instead of their own.", func() int64 { return g.Stats().Shared }),
		counterFunc("cms_delivery_invalidations_total", "Change events applied to the Delivery cache.", func() int64 { return g.Stats().Invalidations }),
		counterFunc("cms_delivery_evicted_tags_total", "Cache tags evicted by change events.", func() int64 { return g.Stats().EvictedTags }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_delivery_reads_waiting",
			Help: "Uncached Delivery reads (HTTP and gRPC) waiting for a worker of the read pool now (at most queries.queueWait each)."},
			func() float64 { return float64(g.ReadsWaiting()) }))
}

// registerRenderCacheMetrics exports the render cache's counters.
func registerRenderCacheMetrics(reg prometheus.Registerer, rc *rendercache.Cache) {
	lookups := func(result string, f func(rendercache.Stats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_render_cache_requests_total",
			"Template renders and stylesheets by render cache result: hit, miss, or behind (the invalidator had not handled the newest change event yet).",
			prometheus.Labels{"result": result}, func() int64 { return f(rc.Stats()) })
	}
	reg.MustRegister(
		lookups("hit", func(s rendercache.Stats) int64 { return s.Hits }),
		lookups("miss", func(s rendercache.Stats) int64 { return s.Misses }),
		lookups("behind", func(s rendercache.Stats) int64 { return s.Behind }),
		counterFunc("cms_render_cache_stored_total", "Renders stored in the render cache.", func() int64 { return rc.Stats().Stored }),
		counterFunc("cms_render_invalidations_total", "Change events applied to the render cache.", func() int64 { return rc.Stats().Invalidations }),
		counterFunc("cms_render_evicted_tags_total", "Render cache tags evicted by change events.", func() int64 { return rc.Stats().EvictedTags }))
}

// registerTokenMetrics exports the bearer-token counters of this process
// (cms_auth_tokens_total by result).
func registerTokenMetrics(reg prometheus.Registerer, tk *auth.Tokens) {
	result := func(result string, f func(auth.TokenStats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_auth_tokens_total",
			"Bearer tokens by result: issued (login), renewed, revoked (logouts, each revoking every token of its user), "+
				"and presented tokens refused as expired, session_expired (the session is older than authSessionMaxAge), "+
				"superseded (replaced by a renewal) or refused (malformed, forged, revoked, user gone).",
			prometheus.Labels{"result": result}, func() int64 { return f(tk.Stats()) })
	}
	reg.MustRegister(
		result("issued", func(s auth.TokenStats) int64 { return s.Issued }),
		result("renewed", func(s auth.TokenStats) int64 { return s.Renewed }),
		result("revoked", func(s auth.TokenStats) int64 { return s.Revoked }),
		result("expired", func(s auth.TokenStats) int64 { return s.Expired }),
		result("session_expired", func(s auth.TokenStats) int64 { return s.SessionExpired }),
		result("superseded", func(s auth.TokenStats) int64 { return s.Superseded }),
		result("refused", func(s auth.TokenStats) int64 { return s.Refused }))
}

// registerLiveMetrics exports the change stream hub's counters.
func registerLiveMetrics(reg prometheus.Registerer, hub *livechanges.Hub) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_live_subscribers", Help: "Open change stream subscriptions (SSE and gRPC) of this process."},
			func() float64 { return float64(hub.Stats().Subscribers) }),
		counterFunc("cms_live_events_released_total", "Change events released to the change stream (after the index and the cache eviction).", func() int64 { return hub.Stats().Released }),
		counterFunc("cms_live_events_delivered_total", "Change events handed to subscribers.", func() int64 { return hub.Stats().Delivered }),
		counterFunc("cms_live_events_parked_total", "Change events not announced because the indexer parked their transaction (the index lacks their changes).", func() int64 { return hub.Stats().Parked }),
		counterFunc("cms_live_slow_subscribers_total", "Subscribers dropped because their buffer was full.", func() int64 { return hub.Stats().Dropped }))
}

// shedCollector exports the shed requests by group (cms_shed_total).
type shedCollector struct {
	sheds *gateway.Sheds
	desc  *prometheus.Desc
}

func registerShedMetrics(reg prometheus.Registerer, s *gateway.Sheds) {
	reg.MustRegister(shedCollector{sheds: s, desc: prometheus.NewDesc("cms_shed_total",
		"Requests refused with 503 because the server was overloaded (search query queue, password checks), by group.",
		[]string{"group"}, nil)})
}

func (c shedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c shedCollector) Collect(ch chan<- prometheus.Metric) {
	for g, n := range c.sheds.Totals() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), g)
	}
}

func counterFunc(name, help string, f func() int64) prometheus.Collector {
	return labeledCounterFunc(name, help, nil, f)
}

// labeledCounterFunc is counterFunc for one label set of a counter.
func labeledCounterFunc(name, help string, labels prometheus.Labels, f func() int64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
		func() float64 { return float64(f()) })
}
