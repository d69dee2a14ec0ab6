// Package app assembles the cms process: it turns a Config into the
// components the chosen targets need (Complete) and runs the gRPC and HTTP
// servers, the outbox relay and the consumers until the context ends (Run).
package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/livechanges"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/templates/sandbox"
	"github.com/cmsplatform/cms/pkg/webhooks"
	"github.com/cmsplatform/cms/services/delivery"
)

// Targets that `cms serve --target` accepts. "all" is what `cms run` serves.
const (
	TargetAll        = "all"
	TargetManagement = "management"
	TargetDelivery   = "delivery"
	TargetRendering  = "rendering"
	TargetIndex      = "index"
	TargetIndexer    = "indexer"
	TargetJobs       = "jobs"
	TargetWebhooks   = "webhooks"
)

// AllTargets lists the single targets in start order.
var AllTargets = []string{TargetManagement, TargetDelivery, TargetRendering, TargetIndex, TargetIndexer, TargetJobs, TargetWebhooks}

// Engines of each component: the embedded one first, the distributed second.
const (
	EngineSQLite        = "sqlite"
	EnginePostgres      = "postgres"
	EngineEmbeddedNATS  = "embedded"
	EngineNATS          = "nats"
	EngineBleve         = "bleve"
	EngineElasticsearch = "elasticsearch"
	EngineMemory        = "memory"
	EngineRedis         = "redis"
	EngineFS            = "fs"
	EngineNATSObjects   = "nats"
)

// Config is plain data; DefaultConfig is laptop mode. The yaml keys are the
// config file's; env vars are CMS_ plus the key path in upper case with
// underscores (CMS_HTTP_ADDR, CMS_STORE_ENGINE …).
type Config struct {
	Target          string        `yaml:"target"`
	HTTPAddr        string        `yaml:"httpAddr"`
	GRPCAddr        string        `yaml:"grpcAddr"`
	DataDir         string        `yaml:"dataDir"`
	LogLevel        string        `yaml:"logLevel"`
	LogFormat       string        `yaml:"logFormat"`
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout"`
	AdminUser       string        `yaml:"adminUser"`
	AdminPassword   string        `yaml:"adminPassword"`
	CORSOrigins     []string      `yaml:"corsOrigins"`
	MaxUploadBytes  int64         `yaml:"maxUploadBytes"`
	// Bearer tokens (README "Bearer tokens"): AuthTokenKey signs them (at
	// least 32 bytes, shared by every process of an installation; empty:
	// with the SQLite store a key generated once and kept in the data
	// directory, else tokens are off), AuthTokenLifetime is how long one
	// is accepted and AuthSessionMaxAge how long after the login renewals
	// keep a session going (at least AuthTokenLifetime).
	// CMS_AUTH_TOKEN_KEY, CMS_AUTH_TOKEN_LIFETIME, CMS_AUTH_SESSION_MAX_AGE.
	AuthTokenKey      string        `yaml:"authTokenKey"`
	AuthTokenLifetime time.Duration `yaml:"authTokenLifetime"`
	AuthSessionMaxAge time.Duration `yaml:"authSessionMaxAge"`
	// tokenClock is the clock of the bearer tokens (nil: time.Now); tests
	// set it to move sessions through their lifetime.
	tokenClock func() time.Time
	// MemoryLimit is the memory this process plans for, in bytes: the Go
	// runtime's soft limit, and the budget each in-memory cache takes a
	// share of (memoryShares; README "Memory"). 0: GOMEMLIMIT, else 90% of
	// the cgroup's limit, else memlimit.DefaultLimit. CMS_MEMORY_LIMIT.
	MemoryLimit int64 `yaml:"memoryLimit"`
	// SearchColumnsMaxBytes is the most memory, estimated, the column
	// index of one embedded search index may hold (pkg/search/bleve,
	// columns.go; README "Memory"): an index whose columns outgrow it
	// frees them a field at a time, least recently used first, and answers
	// the lists, sorts and occurrences reading a freed field from Bleve,
	// logged at WARN, in cms_search_columns_over_budget and
	// cms_search_columns_freed and in `cms doctor`. 0: a
	// quarter of MemoryLimit. CMS_SEARCH_COLUMNS_MAX_BYTES.
	SearchColumnsMaxBytes int64 `yaml:"searchColumnsMaxBytes"`
	// AccessLog logs one compact line per HTTP request (and per gRPC call
	// made directly, not through the REST gateway); off, only faults and
	// summaries are logged (README "HTTP edge").
	AccessLog bool `yaml:"accessLog"`

	// HTTP edge: request body limits, HTTP server timeouts and login
	// throttling (README "### HTTP edge"). Env vars CMS_EDGE_<KEY>, e.g.
	// CMS_EDGE_MAX_BODY_BYTES.
	Edge EdgeConfig `yaml:"edge"`
	// Value sizes (README "Security and limits" / "Value sizes"): one
	// value's JSON and all values of one write request (413 beyond), and
	// the characters the indexer analyses per field (longer values are
	// indexed by their beginning). CMS_MAX_VALUE_BYTES,
	// CMS_MAX_REQUEST_VALUE_BYTES, CMS_MAX_INDEXED_CHARS.
	MaxValueBytes        int `yaml:"maxValueBytes"`
	MaxRequestValueBytes int `yaml:"maxRequestValueBytes"`
	MaxIndexedChars      int `yaml:"maxIndexedChars"`
	// IndexerMaxAttempts: applies of a failing change event before the
	// indexer parks it (indexwriter.RetryPolicy; < 0 never parks).
	// CMS_INDEXER_MAX_ATTEMPTS.
	IndexerMaxAttempts int `yaml:"indexerMaxAttempts"`
	// IndexerBatchSize: change events the indexer applies in one pass
	// (whatever is pending, up to this; 1 applies them one at a time).
	// CMS_INDEXER_BATCH_SIZE.
	IndexerBatchSize int `yaml:"indexerBatchSize"`
	// JobConcurrency: jobs one process of the jobs target runs at once;
	// JobAckWait: how long a job's runner may stay silent before the queue
	// hands the job to another runner (pkg/jobs.RunnerOptions).
	// CMS_JOB_CONCURRENCY, CMS_JOB_ACK_WAIT.
	JobConcurrency int           `yaml:"jobConcurrency"`
	JobAckWait     time.Duration `yaml:"jobAckWait"`
	// JobMaxInputBytes caps one job input across its chunks (422 beyond,
	// as NovaDB's "the file size is larger than expected").
	// CMS_JOB_MAX_INPUT_BYTES.
	JobMaxInputBytes int64 `yaml:"jobMaxInputBytes"`
	// JobCleanupMinAge is the smallest minAge a jobCleanupFiles job may ask
	// for: no user's job removes unreferenced files younger than this.
	// CMS_JOB_CLEANUP_MIN_AGE.
	JobCleanupMinAge time.Duration `yaml:"jobCleanupMinAge"`
	// The attempt log of webhooks (docs/webhooks.md): attempts kept per
	// webhook and how long an attempt is kept; the dispatcher prunes the
	// rest every minute. CMS_WEBHOOK_KEEP_ATTEMPTS,
	// CMS_WEBHOOK_ATTEMPTS_MAX_AGE.
	WebhookKeepAttempts   int           `yaml:"webhookKeepAttempts"`
	WebhookAttemptsMaxAge time.Duration `yaml:"webhookAttemptsMaxAge"`
	// HistoryRetention is how long object history (the versions behind
	// GET …/history, asOf and revert, docs/branches.md) is kept; 0, the
	// default, keeps it for ever. With a retention each Management process
	// prunes the older versions every hour, keeping the newest of each
	// value and object row. CMS_HISTORY_RETENTION.
	HistoryRetention time.Duration `yaml:"historyRetention"`
	// Webhook deliveries (pkg/webhooks, docs/webhooks.md): the bound of one
	// attempt, how long an event is retried before it is given up, the
	// response bytes read, and whether receivers may sit on loopback,
	// link-local or private addresses. CMS_WEBHOOK_TIMEOUT,
	// CMS_WEBHOOK_GIVE_UP, CMS_WEBHOOK_MAX_RESPONSE_BYTES,
	// CMS_WEBHOOK_ALLOW_PRIVATE.
	WebhookTimeout          time.Duration `yaml:"webhookTimeout"`
	WebhookGiveUp           time.Duration `yaml:"webhookGiveUp"`
	WebhookMaxResponseBytes int64         `yaml:"webhookMaxResponseBytes"`
	WebhookAllowPrivate     bool          `yaml:"webhookAllowPrivate"`
	// WebhookMaxLanes bounds the delivery lanes of the webhooks target:
	// one per enabled webhook (its own durable consumer, one delivery in
	// flight); the enabled webhooks beyond it, by ascending id, get no
	// deliveries and are named in a warning. CMS_WEBHOOK_MAX_LANES.
	WebhookMaxLanes int `yaml:"webhookMaxLanes"`
	// Template renders (pkg/templates, docs/rendering.md): the time and the
	// output one render may take. CMS_RENDER_TIMEOUT,
	// CMS_RENDER_MAX_OUTPUT_BYTES.
	RenderTimeout        time.Duration `yaml:"renderTimeout"`
	RenderMaxOutputBytes int           `yaml:"renderMaxOutputBytes"`
	// The render slots of a process (pkg/templates/sandbox, README "Per-user
	// fairness"): renders running at once (abandoned ones included), how
	// many of them one user holds (429 beyond) and how many only
	// administrators take. CMS_RENDER_SLOTS, CMS_RENDER_SLOTS_PER_USER,
	// CMS_RENDER_ADMIN_RESERVE.
	RenderSlots        int `yaml:"renderSlots"`
	RenderSlotsPerUser int `yaml:"renderSlotsPerUser"`
	RenderAdminReserve int `yaml:"renderAdminReserve"`
	// RenderCacheMaxBytes bounds the memory of the per-process render
	// cache (pkg/rendercache, docs/rendering.md) further than its share
	// of MemoryLimit; 0 turns it off. CMS_RENDER_CACHE_MAX_BYTES.
	RenderCacheMaxBytes int64 `yaml:"renderCacheMaxBytes"`
	// RenderSeparateOrigin: the Rendering group is served from an origin of
	// its own (a host name no other group answers on), so renders are sent
	// without the sandboxing Content-Security-Policy that keeps a template's
	// script from running on the API's origin. CMS_RENDER_SEPARATE_ORIGIN.
	RenderSeparateOrigin bool `yaml:"renderSeparateOrigin"`

	// Live bounds the change stream of Delivery (docs/live-changes.md).
	Live LiveConfig `yaml:"live"`

	Store  Component `yaml:"store"`
	Events Component `yaml:"events"`
	Search Component `yaml:"search"`
	Cache  Component `yaml:"cache"`
	Blobs  Component `yaml:"blobs"`

	// Resilience (issue 11 item 10): deadlines of component calls and the
	// shutdown sequence. See "Deadlines, readiness and shutdown" in the
	// README.
	Timeouts   Timeouts      `yaml:"timeouts"`
	DrainDelay time.Duration `yaml:"drainDelay"`
	// Files bounds uploads (files.go).
	Files FilesConfig `yaml:"files"`

	// Queries bounds the search engine queries running at once (README
	// "Overload"): CMS_QUERIES_CONCURRENT, CMS_QUERIES_QUEUE,
	// CMS_QUERIES_QUEUE_WAIT, CMS_QUERIES_SHED_LOG_INTERVAL.
	Queries QueryLimits `yaml:"queries"`
}

// QueryLimits bound concurrent search engine queries (search.QueryLimit):
// Concurrent run at once (0: twice the CPUs; < 0: no limit); more wait for
// a slot while their expected wait stays within QueueWait (0: no bound but
// Queue and timeouts.search), at most Queue of them; beyond, 503 with
// Retry-After at once. The refusals are counted (cms_shed_total) and
// summed up in one log line per ShedLogInterval.
type QueryLimits struct {
	Concurrent      int           `yaml:"concurrent"`
	Queue           int           `yaml:"queue"`
	QueueWait       time.Duration `yaml:"queueWait"`
	ShedLogInterval time.Duration `yaml:"shedLogInterval"`
}

// LiveConfig bounds the change stream (pkg/livechanges) of a process
// serving Delivery: undelivered events per subscriber (a subscriber with
// a full buffer is disconnected and resumes), concurrent subscribers (503
// + Retry-After beyond), changes kept in memory for resuming (an older
// position gets a reset event), and the idle interval between heartbeats;
// the subscribers one user holds (429 + Retry-After beyond) and how many
// only administrators take. CMS_LIVE_BUFFER, CMS_LIVE_MAX_SUBSCRIBERS,
// CMS_LIVE_RETAINED, CMS_LIVE_HEARTBEAT, CMS_LIVE_MAX_SUBSCRIBERS_PER_USER,
// CMS_LIVE_ADMIN_RESERVE.
type LiveConfig struct {
	Buffer                int           `yaml:"buffer"`
	MaxSubscribers        int           `yaml:"maxSubscribers"`
	MaxSubscribersPerUser int           `yaml:"maxSubscribersPerUser"`
	AdminReserve          int           `yaml:"adminReserve"`
	Retained              int           `yaml:"retained"`
	Heartbeat             time.Duration `yaml:"heartbeat"`
}

// DefaultLiveConfig holds the documented defaults of LiveConfig.
func DefaultLiveConfig() LiveConfig {
	return LiveConfig{Buffer: livechanges.DefaultBuffer, MaxSubscribers: livechanges.DefaultMaxSubscribers,
		MaxSubscribersPerUser: livechanges.DefaultMaxSubscribersPerUser, AdminReserve: livechanges.DefaultAdminReserve,
		Retained: livechanges.DefaultRetained, Heartbeat: delivery.DefaultHeartbeat}
}

func (l LiveConfig) validate() []error {
	if l.Buffer <= 0 || l.MaxSubscribers <= 0 || l.Retained <= 0 || l.Heartbeat <= 0 {
		return []error{errors.New("live: buffer, maxSubscribers, retained and heartbeat must be positive")}
	}
	if l.MaxSubscribersPerUser <= 0 || l.AdminReserve < 0 {
		return []error{errors.New("live: maxSubscribersPerUser must be positive, adminReserve not negative")}
	}
	return nil
}

// Defaults of QueryLimits: the queue is sized by QueueWait; Queue only
// bounds memory.
const (
	DefaultQueryQueue           = 4096
	DefaultQueryQueueWait       = time.Second
	DefaultQueryShedLogInterval = 10 * time.Second
)

// DefaultQueryLimits holds the documented defaults of QueryLimits.
func DefaultQueryLimits() QueryLimits {
	return QueryLimits{Queue: DefaultQueryQueue, QueueWait: DefaultQueryQueueWait,
		ShedLogInterval: DefaultQueryShedLogInterval}
}

// limit is the search.QueryLimit the limits mean on this machine.
func (q QueryLimits) limit() search.QueryLimit {
	n := q.Concurrent
	if n == 0 {
		n = 2 * runtime.NumCPU()
	}
	return search.QueryLimit{Concurrent: n, Queue: q.Queue, MaxWait: q.QueueWait}
}

// EdgeConfig bounds what the HTTP server accepts (README "### HTTP edge").
type EdgeConfig struct {
	// MaxBodyBytes caps a request body outside the multipart upload
	// routes (those take MaxUploadBytes): 413 beyond it.
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// MaxJSONDepth caps the nesting of arrays and objects in a JSON body.
	MaxJSONDepth int `yaml:"maxJsonDepth"`
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// the whole request with its body, UploadReadTimeout a multipart
	// upload's, WriteTimeout writing an answer (streamed binaries
	// included), IdleTimeout a keep-alive connection between requests.
	ReadHeaderTimeout time.Duration `yaml:"readHeaderTimeout"`
	ReadTimeout       time.Duration `yaml:"readTimeout"`
	UploadReadTimeout time.Duration `yaml:"uploadReadTimeout"`
	WriteTimeout      time.Duration `yaml:"writeTimeout"`
	IdleTimeout       time.Duration `yaml:"idleTimeout"`
	// Login throttling (auth.GuardConfig): wrong passwords per user name
	// and per client address before a lock, the first lock window (each
	// later one doubles) and its cap, how many names and addresses are
	// tracked, how many password checks run at once (0: half the CPUs)
	// and how long a check waits for a slot before 503.
	LoginUserFailures int           `yaml:"loginUserFailures"`
	LoginAddrFailures int           `yaml:"loginAddrFailures"`
	LoginBackoff      time.Duration `yaml:"loginBackoff"`
	LoginMaxBackoff   time.Duration `yaml:"loginMaxBackoff"`
	LoginTracked      int           `yaml:"loginTracked"`
	PasswordChecks    int           `yaml:"passwordChecks"`
	PasswordCheckWait time.Duration `yaml:"passwordCheckWait"`
}

// DefaultEdgeConfig holds the documented edge defaults.
func DefaultEdgeConfig() EdgeConfig {
	return EdgeConfig{
		MaxBodyBytes: 4 << 20, MaxJSONDepth: 64,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, UploadReadTimeout: 10 * time.Minute,
		WriteTimeout: 10 * time.Minute, IdleTimeout: 2 * time.Minute,
		LoginUserFailures: 5, LoginAddrFailures: 20, LoginBackoff: time.Second, LoginMaxBackoff: 5 * time.Minute,
		LoginTracked: 10000, PasswordCheckWait: 500 * time.Millisecond,
	}
}

func (e EdgeConfig) validate() []error {
	var errs []error
	if e.MaxBodyBytes <= 0 || e.MaxJSONDepth <= 0 {
		errs = append(errs, errors.New("edge: maxBodyBytes and maxJsonDepth must be positive"))
	}
	for name, d := range map[string]time.Duration{"readHeaderTimeout": e.ReadHeaderTimeout, "readTimeout": e.ReadTimeout,
		"uploadReadTimeout": e.UploadReadTimeout, "writeTimeout": e.WriteTimeout, "idleTimeout": e.IdleTimeout,
		"loginBackoff": e.LoginBackoff, "loginMaxBackoff": e.LoginMaxBackoff, "passwordCheckWait": e.PasswordCheckWait} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("edge: %s must be positive", name))
		}
	}
	if e.LoginUserFailures <= 0 || e.LoginAddrFailures <= 0 || e.LoginTracked <= 0 || e.PasswordChecks < 0 {
		errs = append(errs, errors.New("edge: loginUserFailures, loginAddrFailures and loginTracked must be positive, passwordChecks not negative"))
	}
	return errs
}

// Timeouts bound one call to each component; a call that takes longer
// fails as unavailable (503 + Retry-After). 0 disables a deadline.
type Timeouts struct {
	Store  time.Duration `yaml:"store"`
	Events time.Duration `yaml:"events"`
	Search time.Duration `yaml:"search"`
	Cache  time.Duration `yaml:"cache"`
	// Ready bounds the component checks of one /readyz.
	Ready time.Duration `yaml:"ready"`
}

// DefaultTimeouts are the documented defaults of Config.Timeouts.
func DefaultTimeouts() Timeouts {
	return Timeouts{Store: 15 * time.Second, Events: 10 * time.Second, Search: 10 * time.Second,
		Cache: 250 * time.Millisecond, Ready: 2 * time.Second}
}

// DefaultDrainDelay is how long a stopping `cms serve` process keeps
// serving while it reports not-ready, so load balancers stop sending it
// requests first. `cms run` (DefaultConfig, a laptop without a load
// balancer) does not wait.
const DefaultDrainDelay = 5 * time.Second

// Component selects an implementation and where it lives.
type Component struct {
	Engine string `yaml:"engine"`
	// URL of the external server (distributed engines only).
	URL string `yaml:"url"`
	// Prefix isolates index names, cache keys, the change stream or the
	// blob bucket ({prefix}_CMS_BLOBS) of several installations sharing
	// one Elasticsearch, Redis or NATS (for NATS: letters, digits, - and _;
	// empty = the plain stream, the bucket CMS_BLOBS).
	Prefix string `yaml:"prefix"`
}

// DefaultAdminPassword is the documented local default of the bootstrap
// administrator's password; set CMS_ADMIN_PASSWORD anywhere else.
const DefaultAdminPassword = "admin"

// DefaultConfig is `cms run`: every service in one process on embedded
// components with data under ./data.
func DefaultConfig() Config {
	return Config{
		Target:          TargetAll,
		HTTPAddr:        ":8080",
		GRPCAddr:        ":9090",
		DataDir:         "./data",
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: 15 * time.Second,
		AdminUser:       "admin",
		AdminPassword:   DefaultAdminPassword,
		CORSOrigins:     nil, // no cross-origin access unless configured
		MaxUploadBytes:  512 << 20,
		// Bearer tokens.
		AuthTokenLifetime: auth.DefaultTokenLifetime,
		AuthSessionMaxAge: auth.DefaultSessionMaxAge,
		// Value sizes.
		MaxValueBytes:           content.DefaultMaxValueBytes,
		MaxRequestValueBytes:    content.DefaultMaxRequestValueBytes,
		MaxIndexedChars:         indexwriter.DefaultMaxIndexedChars,
		IndexerMaxAttempts:      indexwriter.DefaultMaxAttempts,
		IndexerBatchSize:        events.DefaultBatchSize,
		JobConcurrency:          2,
		JobAckWait:              30 * time.Second,
		JobMaxInputBytes:        jobs.DefaultLimits.MaxInputBytes,
		JobCleanupMinAge:        jobs.DefaultCleanupMinAge,
		WebhookTimeout:          10 * time.Second,
		WebhookGiveUp:           24 * time.Hour,
		WebhookMaxResponseBytes: 64 << 10,
		WebhookMaxLanes:         webhooks.DefaultMaxLanes,
		RenderTimeout:           sandbox.DefaultTimeout,
		RenderMaxOutputBytes:    sandbox.DefaultMaxOutputBytes,
		RenderSlots:             sandbox.DefaultMaxRunning,
		RenderSlotsPerUser:      sandbox.DefaultMaxRunningPerUser,
		RenderAdminReserve:      sandbox.DefaultAdminReserve,
		RenderCacheMaxBytes:     rendercache.DefaultMaxBytes,
		WebhookKeepAttempts:     webhooks.DefaultKeepAttempts,
		WebhookAttemptsMaxAge:   webhooks.DefaultAttemptsMaxAge,
		Store:                   Component{Engine: EngineSQLite},
		Events:                  Component{Engine: EngineEmbeddedNATS},
		Search:                  Component{Engine: EngineBleve, Prefix: "cms"},
		Cache:                   Component{Engine: EngineMemory, Prefix: "cms"},
		Blobs:                   Component{Engine: EngineFS},
		Edge:                    DefaultEdgeConfig(),
		Live:                    DefaultLiveConfig(),
		// Resilience block.
		Timeouts: DefaultTimeouts(),
		Files:    DefaultFilesConfig(),
		Queries:  DefaultQueryLimits(),
	}
}

// DistributedConfig is `cms serve`: PostgreSQL, NATS, Elasticsearch, Redis
// and blobs in the NATS object store. URLs come from the environment
// (CMS_POSTGRES_URL, CMS_NATS_URL, CMS_ELASTICSEARCH_URL, CMS_REDIS_URL).
func DistributedConfig() Config {
	c := DefaultConfig()
	c.LogFormat = "json"
	c.Store.Engine = EnginePostgres
	c.Events.Engine = EngineNATS
	c.Search.Engine = EngineElasticsearch
	c.Cache.Engine = EngineRedis
	c.Blobs.Engine = EngineNATSObjects
	c.DrainDelay = DefaultDrainDelay
	return c
}

// Targets expands Target into the single targets to run.
func (c Config) Targets() []string {
	if c.Target == TargetAll || c.Target == "" {
		return AllTargets
	}
	return []string{c.Target}
}

// Has reports whether target t runs in this process.
func (c Config) Has(t string) bool { return slices.Contains(c.Targets(), t) }

// Validate reports every configuration error at once.
func (c Config) Validate() error {
	var errs []error
	if c.Target != TargetAll && !slices.Contains(AllTargets, c.Target) {
		errs = append(errs, fmt.Errorf("target %q: want one of all, %v", c.Target, AllTargets))
	}
	if c.HTTPAddr == "" && c.GRPCAddr == "" {
		errs = append(errs, errors.New("httpAddr and grpcAddr are both empty"))
	}
	if c.AdminPassword == "" {
		errs = append(errs, errors.New("adminPassword is empty: set CMS_ADMIN_PASSWORD"))
	}
	if c.AuthTokenKey != "" && len(c.AuthTokenKey) < auth.MinTokenKeyBytes {
		errs = append(errs, fmt.Errorf("authTokenKey has %d bytes, want at least %d", len(c.AuthTokenKey), auth.MinTokenKeyBytes))
	}
	if err := auth.CheckTokenConfig(c.AuthTokenLifetime, c.AuthSessionMaxAge); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Edge.validate()...)
	errs = append(errs, c.Live.validate()...)
	if c.WebhookMaxLanes < 1 {
		errs = append(errs, errors.New("webhookMaxLanes must be at least 1"))
	}
	if c.JobMaxInputBytes < 0 {
		errs = append(errs, errors.New("jobMaxInputBytes must not be negative"))
	}
	if c.JobCleanupMinAge < 0 {
		errs = append(errs, errors.New("jobCleanupMinAge must not be negative"))
	}
	if c.HistoryRetention < 0 {
		errs = append(errs, errors.New("historyRetention must not be negative (0 keeps the history for ever)"))
	}
	if c.Queries.Queue < 0 || c.Queries.QueueWait < 0 || c.Queries.ShedLogInterval <= 0 {
		errs = append(errs, errors.New("queries: queue and queueWait must not be negative, shedLogInterval must be positive"))
	}
	if c.RenderSlots <= 0 || c.RenderSlotsPerUser <= 0 || c.RenderAdminReserve < 0 {
		errs = append(errs, errors.New("renderSlots and renderSlotsPerUser must be positive, renderAdminReserve not negative"))
	}
	if c.MemoryLimit < 0 {
		errs = append(errs, errors.New("memoryLimit must not be negative (0 derives it from GOMEMLIMIT or the cgroup)"))
	}
	if c.SearchColumnsMaxBytes < 0 {
		errs = append(errs, errors.New("searchColumnsMaxBytes must not be negative (0 takes a quarter of memoryLimit)"))
	}
	if c.RenderCacheMaxBytes < 0 {
		errs = append(errs, errors.New("renderCacheMaxBytes must not be negative (0 turns the render cache off)"))
	}
	if slices.ContainsFunc(c.CORSOrigins, func(o string) bool { return strings.EqualFold(strings.TrimSpace(o), "null") }) {
		errs = append(errs, errors.New(`corsOrigins: "null" is never allowed (any sandboxed page sends it)`))
	}
	check := func(name string, comp Component, embedded, distributed string, needsURL bool) {
		if !c.uses(name) {
			return // e.g. serve --target=management needs no search URL
		}
		switch comp.Engine {
		case embedded:
		case distributed:
			if needsURL && comp.URL == "" {
				errs = append(errs, fmt.Errorf("%s: engine %q needs a url", name, comp.Engine))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: engine %q: want %q or %q", name, comp.Engine, embedded, distributed))
		}
	}
	check("store", c.Store, EngineSQLite, EnginePostgres, true)
	check("events", c.Events, EngineEmbeddedNATS, EngineNATS, true)
	check("search", c.Search, EngineBleve, EngineElasticsearch, true)
	check("cache", c.Cache, EngineMemory, EngineRedis, true)
	check("blobs", c.Blobs, EngineFS, EngineNATSObjects, false)
	return errors.Join(errs...)
}

// path returns a path under the data directory.
func (c Config) path(elem ...string) string {
	return filepath.Join(append([]string{c.DataDir}, elem...)...)
}

// uses reports whether a component is opened for the configured targets
// (targetTable).
func (c Config) uses(component string) bool {
	for _, t := range c.Targets() {
		if slices.Contains(target(t).opens, component) {
			return true
		}
	}
	// Blobs in the NATS object store need the events connection.
	return component == "events" && c.uses("blobs") && c.Blobs.Engine == EngineNATSObjects
}
