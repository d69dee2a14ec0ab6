package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/doctor"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/migrations"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
)

// maxClockSkew is the clock difference to a component doctor warns
// about: transaction times, token lifetimes and lag figures compare
// clocks of several machines.
const maxClockSkew = 2 * time.Second

// embedded is the line of a component cms run holds inside its process:
// only its files can be looked at from outside.
func embedded(subject, dir string) doctor.Line {
	if _, err := os.Stat(dir); err != nil {
		return doctor.Line{Subject: subject, Verdict: doctor.Warn, Detail: "embedded; " + dir + " does not exist yet",
			Fix: "start `cms run` once (it creates it), or point --data-dir at the installation's data"}
	}
	return doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: "embedded in cms run's process, data in " + dir}
}

func checkStore(ctx context.Context, cfg Config) []doctor.Line {
	var (
		db      *sql.DB
		dialect migrations.Dialect
		version string
		now     *time.Time
	)
	switch cfg.Store.Engine {
	case EngineSQLite:
		path := cfg.path("cms.db")
		if _, err := os.Stat(path); err != nil {
			return []doctor.Line{embedded("store sqlite", path)}
		}
		var err error
		if db, err = sql.Open("sqlite", "file:"+path+"?mode=ro"); err != nil {
			return []doctor.Line{doctor.Failed("store sqlite", err, "check the file's permissions")}
		}
		dialect = migrations.SQLite
		if err := db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&version); err != nil {
			_ = db.Close()
			return []doctor.Line{doctor.Failed("store sqlite", err, "the file is not a SQLite database, or it is locked")}
		}
		version = "SQLite " + version + ", " + path
	case EnginePostgres:
		pc, err := pgx.ParseConfig(cfg.Store.URL)
		if err != nil {
			return []doctor.Line{doctor.Failed("store postgres", err, "fix CMS_STORE_URL (a postgres:// URL)")}
		}
		db, dialect = stdlib.OpenDB(*pc), migrations.Postgres
		if err := db.QueryRowContext(ctx, `SHOW server_version`).Scan(&version); err != nil {
			_ = db.Close()
			return []doctor.Line{doctor.Failed("store postgres", err,
				"start PostgreSQL or fix CMS_STORE_URL; the user needs CONNECT on the database")}
		}
		version = "PostgreSQL " + version
		var t time.Time
		if err := db.QueryRowContext(ctx, `SELECT now()`).Scan(&t); err == nil {
			now = &t
		}
	default:
		return nil
	}
	defer db.Close()
	subject := "store " + cfg.Store.Engine
	out := []doctor.Line{{Subject: subject, Verdict: doctor.OK, Detail: "reachable, " + version}}
	pending, err := migrations.Pending(ctx, db, dialect)
	switch {
	case err != nil:
		out = append(out, doctor.Failed("store migrations", err, "the schema is unreadable: restore it or start on an empty database"))
	case len(pending) > 0:
		names := make([]string, 0, len(pending))
		for _, m := range pending {
			names = append(names, fmt.Sprintf("%03d_%s", m.Version, m.Name))
		}
		out = append(out, doctor.Line{Subject: "store migrations", Verdict: doctor.Warn,
			Detail: fmt.Sprintf("%d not applied: %s", len(pending), strings.Join(names, ", ")),
			Fix:    "start this version's processes (the first one applies them in one transaction)"})
	default:
		all, _ := migrations.List(dialect)
		out = append(out, doctor.Line{Subject: "store migrations", Verdict: doctor.OK, Detail: fmt.Sprintf("all %d applied", len(all))})
	}
	if now != nil {
		out = append(out, clockLine("clock vs postgres", *now))
	}
	return out
}

// clockLine compares the component's time with ours (the component's
// answer is at most the round trip old, which a 2 s bound absorbs).
func clockLine(subject string, theirs time.Time) doctor.Line {
	skew := time.Until(theirs).Round(time.Millisecond)
	d := fmt.Sprintf("%+.3f s", skew.Seconds())
	if math.Abs(float64(skew)) > float64(maxClockSkew) {
		return doctor.Line{Subject: subject, Verdict: doctor.Warn, Detail: d + " apart",
			Fix: "synchronize both machines' clocks (NTP): transaction times, token lifetimes and lag compare them"}
	}
	return doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: d}
}

func checkEvents(ctx context.Context, cfg Config) []doctor.Line {
	switch cfg.Events.Engine {
	case EngineEmbeddedNATS:
		return []doctor.Line{embedded("events embedded NATS", cfg.path("nats"))}
	case EngineNATS:
	default:
		return nil
	}
	nc, err := natsConnect(ctx, cfg.Events.URL)
	if err != nil {
		return []doctor.Line{doctor.Failed("events nats", err, "start NATS (with -js) or fix CMS_EVENTS_URL")}
	}
	defer nc.Close()
	out := []doctor.Line{{Subject: "events nats", Verdict: doctor.OK, Detail: "reachable, nats-server " + nc.ConnectedServerVersion()}}
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = js.AccountInfo(ctx)
	}
	if err != nil {
		return append(out, doctor.Failed("events jetstream", err, "start nats-server with JetStream (-js) and a store directory"))
	}
	stream := events.StreamConfig{}.WithDefaults().Name
	queue := "CMS_JOBS"
	if ns := cfg.Events.Prefix; ns != "" {
		stream, queue = ns+"_"+stream, ns+"_"+queue
	}
	for _, name := range []string{stream, queue} {
		out = append(out, streamLines(ctx, js, name)...)
	}
	return out
}

// streamLines reports a stream and its durable consumers: messages,
// pending and unacknowledged deliveries per consumer.
func streamLines(ctx context.Context, js jetstream.JetStream, name string) []doctor.Line {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return []doctor.Line{{Subject: "stream " + name, Verdict: doctor.Warn, Detail: "does not exist yet",
			Fix: "start the management target once: it creates the stream"}}
	}
	if err != nil {
		return []doctor.Line{doctor.Failed("stream "+name, err, "check the NATS account's JetStream limits")}
	}
	info := s.CachedInfo()
	out := []doctor.Line{{Subject: "stream " + name, Verdict: doctor.OK,
		Detail: fmt.Sprintf("%d messages, %d bytes, sequence %d", info.State.Msgs, info.State.Bytes, info.State.LastSeq)}}
	names := s.ListConsumers(ctx)
	for c := range names.Info() {
		if c.Config.Durable == "" {
			continue // ephemeral: one per process, gone with it
		}
		l := doctor.Line{Subject: "consumer " + c.Name, Verdict: doctor.OK,
			Detail: fmt.Sprintf("%d pending, %d unacknowledged, %d redelivered", c.NumPending, c.NumAckPending, c.NumRedelivered)}
		if c.NumPending > 10000 {
			l.Verdict, l.Fix = doctor.Warn, "its worker is behind or stopped: check the processes of its target"
		}
		out = append(out, l)
	}
	if err := names.Err(); err != nil {
		out = append(out, doctor.Failed("consumers of "+name, err, "check the NATS account's permissions"))
	}
	return out
}

func natsConnect(ctx context.Context, url string) (*nats.Conn, error) {
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	return nats.Connect(url, nats.Name("cms-doctor"), nats.Timeout(timeout), nats.NoReconnect())
}

func checkSearch(ctx context.Context, cfg Config) []doctor.Line {
	switch cfg.Search.Engine {
	case EngineBleve:
		return []doctor.Line{embedded("search bleve", cfg.path("bleve")), checkColumns(ctx, cfg)}
	case EngineElasticsearch:
	default:
		return nil
	}
	e, err := elastic.New(cfg.Search.URL, elastic.WithPrefix(cfg.Search.Prefix))
	if err != nil {
		return []doctor.Line{doctor.Failed("search elasticsearch", err, "fix CMS_SEARCH_URL")}
	}
	defer e.Close()
	if err := e.Ping(ctx); err != nil {
		return []doctor.Line{doctor.Failed("search elasticsearch", err, "start Elasticsearch, fix CMS_SEARCH_URL, or bring the cluster to yellow")}
	}
	out := []doctor.Line{{Subject: "search elasticsearch", Verdict: doctor.OK, Detail: "reachable, cluster green or yellow"}}
	ix, err := indexwriter.New(nil, e, cfg.indexing(discardLogger()))
	if err != nil {
		return append(out, doctor.Failed("search index", err, "fix CMS_SEARCH_PREFIX"))
	}
	name := ix.ObjectsIndex()
	aliasDetail := "index " + name + " (no alias: `cms reindex` switches to one)"
	if target, err := e.ResolveAlias(ctx, name); err == nil {
		aliasDetail = "alias " + name + " → " + target
	}
	have, err := e.IndexMapping(ctx, name)
	switch {
	case err != nil:
		out = append(out, doctor.Line{Subject: "search index", Verdict: doctor.Warn, Detail: name + " not readable: " + err.Error(),
			Fix: "start the indexer target (it creates the index), or run `cms reindex`"})
	case !have.Equal(ix.Mapping()):
		out = append(out, doctor.Line{Subject: "search index", Verdict: doctor.Fail,
			Detail: aliasDetail + ": its mapping is not this version's",
			Fix:    "run `cms reindex` (it builds an index with this version's mapping and switches the alias)"})
	default:
		out = append(out, doctor.Line{Subject: "search index", Verdict: doctor.OK, Detail: aliasDetail + ", mapping current"})
	}
	return out
}

func checkCache(ctx context.Context, cfg Config) []doctor.Line {
	switch cfg.Cache.Engine {
	case EngineMemory:
		return []doctor.Line{{Subject: "cache memory", Verdict: doctor.OK, Detail: "in each process"}}
	case EngineRedis:
	default:
		return nil
	}
	opt, err := goredis.ParseURL(cfg.Cache.URL)
	if err != nil {
		return []doctor.Line{doctor.Failed("cache redis", err, "fix CMS_CACHE_URL (a redis:// URL)")}
	}
	c := goredis.NewClient(opt)
	defer c.Close()
	info, err := c.Info(ctx, "server", "memory").Result()
	if err != nil {
		return []doctor.Line{doctor.Failed("cache redis", err, "start Redis or fix CMS_CACHE_URL; Delivery serves uncached meanwhile")}
	}
	fields := infoFields(info)
	out := []doctor.Line{{Subject: "cache redis", Verdict: doctor.OK, Detail: "reachable, Redis " + fields["redis_version"]}}
	maxMem, _ := strconv.ParseInt(fields["maxmemory"], 10, 64)
	policy := fields["maxmemory_policy"]
	switch {
	case maxMem == 0:
		out = append(out, doctor.Line{Subject: "cache redis memory", Verdict: doctor.Warn, Detail: "no maxmemory: the cache grows until the machine runs out",
			Fix: "set maxmemory and maxmemory-policy allkeys-lru in redis.conf"})
	case !strings.HasPrefix(policy, "allkeys-"):
		out = append(out, doctor.Line{Subject: "cache redis memory", Verdict: doctor.Warn,
			Detail: fmt.Sprintf("maxmemory %d bytes with policy %s: writes fail when it is full", maxMem, policy),
			Fix:    "set maxmemory-policy allkeys-lru"})
	default:
		out = append(out, doctor.Line{Subject: "cache redis memory", Verdict: doctor.OK, Detail: fmt.Sprintf("maxmemory %d bytes, %s", maxMem, policy)})
	}
	if t, err := c.Time(ctx).Result(); err == nil {
		out = append(out, clockLine("clock vs redis", t))
	}
	return out
}

// infoFields parses the key:value lines of Redis INFO.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

func checkBlobs(ctx context.Context, cfg Config) []doctor.Line {
	switch cfg.Blobs.Engine {
	case EngineFS:
		dir := cfg.path("blobs")
		if _, err := os.Stat(dir); err != nil {
			return []doctor.Line{embedded("blobs fs", dir)}
		}
		f, err := os.CreateTemp(dir, ".doctor-*")
		if err != nil {
			return []doctor.Line{doctor.Failed("blobs fs", err, "make "+dir+" writable by the cms user")}
		}
		_ = f.Close()
		_ = os.Remove(f.Name())
		return []doctor.Line{{Subject: "blobs fs", Verdict: doctor.OK, Detail: "writable, " + dir}}
	case EngineNATSObjects:
	default:
		return nil
	}
	nc, err := natsConnect(ctx, cfg.Events.URL)
	if err != nil {
		return []doctor.Line{doctor.Failed("blobs nats", err, "start NATS or fix CMS_EVENTS_URL")}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return []doctor.Line{doctor.Failed("blobs nats", err, "enable JetStream on the NATS server")}
	}
	bucket := natsobj.BucketName(cfg.Blobs.Prefix)
	objs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return []doctor.Line{{Subject: "blobs bucket", Verdict: doctor.Warn, Detail: bucket + " does not exist yet",
			Fix: "start a process that serves Management or Rendering once: it creates the bucket"}}
	}
	if err != nil {
		return []doctor.Line{doctor.Failed("blobs bucket", err, "check the NATS account's JetStream limits")}
	}
	st, err := objs.Status(ctx)
	if err != nil {
		return []doctor.Line{doctor.Failed("blobs bucket", err, "check the NATS account's JetStream limits")}
	}
	return []doctor.Line{{Subject: "blobs bucket", Verdict: doctor.OK, Detail: fmt.Sprintf("%s, %d bytes", bucket, st.Size())}}
}

// checkIndexer compares the store's newest transaction with the index's
// change-tracking version (the lag, in transactions and in time since the
// first one not applied) and counts the parked events. It needs the store
// and the search engine; embedded ones are inside cms run.
func checkIndexer(ctx context.Context, cfg Config) []doctor.Line {
	if cfg.Store.Engine != EnginePostgres || cfg.Search.Engine != EngineElasticsearch {
		return nil
	}
	st, err := postgres.Open(ctx, cfg.Store.URL, store.WithMigrate(false), store.WithLogger(discardLogger()))
	if err != nil {
		return nil // the store check reports it
	}
	defer st.Close()
	e, err := elastic.New(cfg.Search.URL, elastic.WithPrefix(cfg.Search.Prefix))
	if err != nil {
		return nil
	}
	defer e.Close()
	ix, err := indexwriter.New(st, e, cfg.indexing(discardLogger()))
	if err != nil {
		return nil
	}
	if _, err := e.IndexMapping(ctx, ix.ObjectsIndex()); err != nil {
		return nil // no index yet: the search check says so
	}
	last, err := st.LastTransactionID(ctx)
	if err != nil {
		return []doctor.Line{doctor.Failed("indexer lag", err, "see the store line")}
	}
	applied, err := ix.CurrentVersion(ctx)
	if err != nil {
		return []doctor.Line{doctor.Failed("indexer lag", err, "see the search lines")}
	}
	lag := doctor.Line{Subject: "indexer lag", Verdict: doctor.OK, Detail: fmt.Sprintf("caught up at transaction %d", applied)}
	if behind := last - applied; behind > 0 {
		lag.Detail = fmt.Sprintf("%d transactions behind (index at %d, store at %d)", behind, applied, last)
		if tx, err := st.GetTransaction(ctx, applied+1); err == nil {
			age := time.Since(tx.Time).Round(time.Second)
			lag.Detail += fmt.Sprintf(", oldest not applied %v ago", age)
			if age > time.Minute {
				lag.Verdict, lag.Fix = doctor.Warn, "start or scale the indexer target; /readyz of an indexer shows its lag"
			}
		}
	}
	out := []doctor.Line{lag}
	parked, total, err := ix.Parked(ctx)
	switch {
	case err != nil:
		out = append(out, doctor.Failed("indexer parked", err, "see the search lines"))
	case total > 0:
		first := parked[0]
		out = append(out, doctor.Line{Subject: "indexer parked", Verdict: doctor.Fail,
			Detail: fmt.Sprintf("%d change events parked (first: transaction %d, %s)", total, first.Transaction, first.Err),
			Fix:    "`cms indexer parked` lists them, `cms indexer retry` applies them again"})
	default:
		out = append(out, doctor.Line{Subject: "indexer parked", Verdict: doctor.OK, Detail: "none"})
	}
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
