package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/loadtest"
	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// The distributed path (issue 31 item 5): `cms serve --target=all` (one
// replica, all targets in one process) on PostgreSQL, NATS,
// Elasticsearch and Redis, seeded with distArticles catalogue articles
// (cmsload.SeedCatalogue: a title, a price, an author and five tags
// each). Each workload runs at 1 and 8 connections for distDuration
// and, in the same run, the engine's own cost of the same work:
//
//   - get: Delivery GET of one article with author and tags resolved,
//     uncached (the Redis keys are deleted first and no article is read
//     twice); engine: the Elasticsearch requests Delivery sent for one
//     such read, replayed with the go-elasticsearch client.
//   - list: filter=price>N&sort=price desc&take=50&resolve=author,tags
//     with an N no earlier request sent (uncached); engine: its
//     Elasticsearch requests.
//   - search: an Index API search (price > N, 20 hits); engine: its
//     Elasticsearch requests.
//   - cached: the same Delivery GET again (a Redis hit); engine: a Redis
//     GET of a value of the answer's size.
//   - write: Cms_CreateObjects of one article (10 values); engine: the
//     rows such a write stores (transaction, object, values, versions,
//     outbox), inserted with pgx in one transaction on a database of
//     the same schema.
//
// The engine requests are captured by a recording proxy in front of
// Elasticsearch that only a second Delivery and Index server (the
// capture servers) use; the measured server talks to Elasticsearch
// directly. A replayed capture repeats one body, so Elasticsearch may
// answer it from its caches: the ratio is an upper bound of our cost.
//
// It reports, per workload and connections, req/s, p50 and the ratio of
// our p50 to the engine's (ratio). CMS_BENCH_DIST_ARTICLES and
// CMS_BENCH_DIST_DURATION change the size and the duration;
// CMS_BENCH_DIST_WORKLOADS (e.g. "write,cached") runs only those.
func BenchmarkDistributedPath(b *testing.B) {
	articles := 2000
	if n, err := strconv.Atoi(os.Getenv("CMS_BENCH_DIST_ARTICLES")); err == nil && n > 0 {
		articles = n
	}
	dur := 1500 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("CMS_BENCH_DIST_DURATION")); err == nil && d > 0 {
		dur = d
	}
	for b.Loop() {
		runDistributedPath(b, articles, dur, []int{1, 8}, b.ReportMetric, os.Stdout)
	}
}

// TestDistributedPath runs BenchmarkDistributedPath's workloads briefly
// (200 articles, 8 connections, 150 ms each) against the same setup: every
// request of ours and of the engines' must succeed, and every read's
// Elasticsearch requests must be captured, so the benchmark keeps
// measuring what it says.
func TestDistributedPath(t *testing.T) {
	var sb strings.Builder
	runDistributedPath(t, 200, 150*time.Millisecond, []int{8}, func(float64, string) {}, &sb)
	t.Log("\n" + sb.String())
}

// runDistributedPath seeds articles, runs each workload for dur at each
// of conns, ours then the engine's, and reports each figure to metric and
// the table to out.
func runDistributedPath(b testing.TB, articles int, dur time.Duration, conns []int, metric func(float64, string), out io.Writer) {
	config, _ := isolatedDistributed(b, "distpath")
	cfg := config(TargetAll)
	ours := "http://" + benchStart(b, cfg).HTTPAddr()
	target := cmsload.Target{URL: ours, User: "admin", Password: "test-password", Branch: 4, Client: cmsload.NewClient(16)}
	t0 := time.Now()
	cat, err := cmsload.SeedCatalogue(context.Background(), target, cmsload.CatalogueOptions{Articles: articles, Wait: 2 * time.Minute}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d articles in %v", articles, time.Since(t0).Round(time.Millisecond))

	// The capture servers: Delivery and Index on the recording proxy.
	rec := newESRecorder(b, cfg.Search.URL)
	capture := func(tg string) string {
		c := config(tg)
		c.Search.URL = rec.url
		return "http://" + benchStart(b, c).HTTPAddr()
	}
	capDeliv, capIndex := capture(TargetDelivery), capture(TargetIndex)
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{cfg.Search.URL}})
	if err != nil {
		b.Fatal(err)
	}

	w := &distWorkload{cat: cat, client: target.Client}
	var next atomic.Int64
	get := func(base string, i int64) (int, []byte, error) {
		return w.get(base, w.getPath(i))
	}
	list := func(base string, i int64) (int, []byte, error) { return w.get(base, w.listPath(i)) }
	search := func(base string, i int64) (int, []byte, error) { return w.post(base, indexSearchPath, w.searchBody(i)) }
	// Capture each read's engine requests, after a warm-up read on the
	// capture server (its first reads fetch mappings and branch state).
	type read struct {
		name string
		do   func(string, int64) (int, []byte, error)
		base string
	}
	replays := map[string][]esRequest{}
	for _, r := range []read{{"get", get, capDeliv}, {"list", list, capDeliv}, {"search", search, capIndex}} {
		if code, body, err := r.do(r.base, -1); err != nil || code != http.StatusOK {
			b.Fatalf("%s on the capture server: %d %v %.300s", r.name, code, err, body)
		}
		rec.start()
		if code, body, err := r.do(r.base, -2); err != nil || code != http.StatusOK {
			b.Fatalf("%s on the capture server: %d %v %.300s", r.name, code, err, body)
		}
		replays[r.name] = rec.stop()
		if len(replays[r.name]) == 0 {
			b.Fatalf("%s: no Elasticsearch request captured", r.name)
		}
		b.Logf("%s: %d Elasticsearch requests per read: %s", r.name, len(replays[r.name]), rec.summary(replays[r.name]))
	}
	replay := func(reqs []esRequest) func(context.Context) error {
		return func(ctx context.Context) error {
			for _, q := range reqs {
				if err := q.send(ctx, es); err != nil {
					return err
				}
			}
			return nil
		}
	}
	ok := func(do func(string, int64) (int, []byte, error), idx func() int64) func(context.Context) error {
		return func(context.Context) error {
			code, body, err := do(ours, idx())
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("%d: %.300s", code, body)
			}
			return err
		}
	}
	// The cached read and its Redis baseline.
	cachedPath := w.getPath(0)
	code, answer, err := w.get(ours, cachedPath)
	if err != nil || code != http.StatusOK {
		b.Fatalf("cached read: %d %v", code, err)
	}
	rdb := redisClient(b, cfg.Cache.URL)
	redisKey := cfg.Cache.Prefix + "bench:value"
	if err := rdb.Set(context.Background(), redisKey, bytes.Repeat([]byte("x"), len(answer)), time.Hour).Err(); err != nil {
		b.Fatal(err)
	}
	pgWrite := newPGWriteBaseline(b, cat)
	var writes atomic.Int64

	type workload struct {
		name     string
		ours     func(context.Context) error
		engine   func(context.Context) error
		requests int64 // cap per run (0: none)
		before   func()
	}
	// Each connection count reads articles of its own, once each.
	uncachedGets := int64(len(cat.Articles) / len(conns))
	workloads := []workload{
		{name: "get", ours: ok(get, func() int64 { return next.Add(1) }), engine: replay(replays["get"]),
			requests: uncachedGets, before: func() { testenv.DeleteRedisKeys(b, cfg.Cache.URL, cfg.Cache.Prefix+"k:") }},
		{name: "list", ours: ok(list, func() int64 { return next.Add(1) }), engine: replay(replays["list"]),
			// Past the articles the gets read, and past the thresholds the
			// run at fewer connections sent (not back to them: those
			// answers are cached).
			before: func() {
				if n := int64(len(cat.Articles)); next.Load() < n {
					next.Store(n)
				}
			}},
		{name: "search", ours: ok(search, func() int64 { return next.Add(1) }), engine: replay(replays["search"])},
		{name: "cached", ours: func(context.Context) error {
			code, body, err := w.get(ours, cachedPath)
			if err == nil && (code != http.StatusOK || len(body) != len(answer)) {
				err = fmt.Errorf("cached read: %d, %d bytes", code, len(body))
			}
			return err
		}, engine: func(ctx context.Context) error {
			v, err := rdb.Get(ctx, redisKey).Bytes()
			if err == nil && len(v) != len(answer) {
				err = fmt.Errorf("redis GET: %d bytes", len(v))
			}
			return err
		}},
		{name: "write", ours: func(ctx context.Context) error {
			code, body, err := w.post(ours, "/apis/cms/v1/branches/4/objects", w.createBody(writes.Add(1)))
			if err == nil && code != http.StatusCreated {
				err = fmt.Errorf("create: %d %.300s", code, body)
			}
			return err
		}, engine: pgWrite.write},
	}
	fmt.Fprintf(out, "distributed path: %d articles, cms serve --target=all on PostgreSQL, NATS, Elasticsearch, Redis; %v per run\n", articles, dur)
	fmt.Fprintf(out, "%-8s %5s %10s %9s %12s %12s %7s\n", "workload", "conns", "req/s", "p50-ms", "engine-req/s", "engine-p50", "ratio")
	only := os.Getenv("CMS_BENCH_DIST_WORKLOADS")
	for _, wl := range workloads {
		if only != "" && !slices.Contains(strings.Split(only, ","), wl.name) {
			continue
		}
		for _, conns := range conns {
			if wl.before != nil {
				wl.before()
			}
			cfgRun := loadtest.Config{Concurrency: conns, Duration: dur, Requests: wl.requests}
			stop := distProfile(b, fmt.Sprintf("%s-%d", wl.name, conns))
			mine := distRun(b, cfgRun, wl.name, wl.ours)
			stop()
			eng := distRun(b, loadtest.Config{Concurrency: conns, Duration: dur}, wl.name+"-engine", wl.engine)
			ratio := float64(mine.P50) / float64(max(eng.P50, time.Microsecond))
			name := fmt.Sprintf("%s-%d", wl.name, conns)
			metric(mine.Throughput, name+"-req/s")
			metric(loadtest.Millis(mine.P50), name+"-p50-ms")
			metric(eng.Throughput, name+"-engine-req/s")
			metric(loadtest.Millis(eng.P50), name+"-engine-p50-ms")
			metric(ratio, name+"-ratio")
			fmt.Fprintf(out, "%-8s %5d %10.0f %9.2f %12.0f %12.2f %7.2f\n", wl.name, conns, mine.Throughput, loadtest.Millis(mine.P50),
				eng.Throughput, loadtest.Millis(eng.P50), ratio)
		}
	}
}

// distProfile writes, when CMS_BENCH_PROFILES names a directory, a CPU
// profile of the process (the server and the load's clients) while our
// side of workload name runs (<name>-cpu.pb.gz); the returned func ends
// it.
func distProfile(b testing.TB, name string) func() {
	dir := os.Getenv("CMS_BENCH_PROFILES")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+"-cpu.pb.gz"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// distRun runs one operation with cfg and returns its summary; any
// failed request fails the benchmark.
func distRun(b testing.TB, cfg loadtest.Config, name string, do func(context.Context) error) loadtest.Stats {
	b.Helper()
	rep, err := loadtest.Run(context.Background(), cfg, []loadtest.Op{{Name: name, Weight: 1, Do: do}})
	if err != nil {
		b.Fatal(err)
	}
	st := rep.Ops[0]
	if st.Errors > 0 {
		b.Fatalf("%s: %d of %d requests failed: %v", name, st.Errors, st.Requests, st.FirstError)
	}
	return st
}

const indexSearchPath = "/apis/index/v1/branches/4/objects"

// distWorkload builds the requests of BenchmarkDistributedPath.
type distWorkload struct {
	cat    *cmsload.Catalogue
	client *http.Client
}

// getPath reads the i-th article (i < 0: from the end, for the captures).
func (w *distWorkload) getPath(i int64) string {
	n := int64(len(w.cat.Articles))
	id := w.cat.Articles[((i%n)+n)%n]
	return fmt.Sprintf("/delivery/api/branches/4/objects/%d?resolve=%s,%s", id, w.cat.AuthorAPI, w.cat.TagsAPI)
}

// listPath filters on a price threshold of its own for each i (0.01
// apart), so no answer is cached.
func (w *distWorkload) listPath(i int64) string {
	n := int64(cmsload.CatalogueMaxPrice-50) * 100
	th := ((i%n)+n)%n + 1
	f := fmt.Sprintf("%s>%d.%02d", w.cat.PriceAPI, th/100, th%100)
	return fmt.Sprintf("/delivery/api/branches/4/types/%s/objects?filter=%s&sort=%s&take=50&resolve=%s,%s", w.cat.TypeAPI,
		url.QueryEscape(f), url.QueryEscape(w.cat.PriceAPI+" desc"), w.cat.AuthorAPI, w.cat.TagsAPI)
}

// searchBody is an Index search for articles above a price of its own.
func (w *distWorkload) searchBody(i int64) []byte {
	n := int64(cmsload.CatalogueMaxPrice-50) * 100
	th := ((i%n)+n)%n + 1
	return fmt.Appendf(nil, `{"filter":{"objectTypeIds":[%d],"filters":[{"attrId":%d,"langId":0,"variantId":0,"value":"%d.%02d","compareOperator":4}]},`+
		`"sortBy":[{"sortBy":3,"reverse":false}],"page":{"skip":0,"take":20}}`, w.cat.Type, w.cat.Price, th/100, th%100)
}

// createBody is one article of the catalogue's shape: a name, a title,
// a price, an author and five tags.
func (w *distWorkload) createBody(i int64) []byte {
	c := w.cat
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"comment":"bench","objects":[{"meta":{"typeRef":%d},"values":[`+
		`{"attribute":1000,"language":201,"variant":0,"value":"Written %d"},`+
		`{"attribute":%d,"language":0,"variant":0,"value":"red river summit %d"},`+
		`{"attribute":%d,"language":0,"variant":0,"value":%d.5},`+
		`{"attribute":%d,"language":0,"variant":0,"value":%d}`, c.Type, i, c.Title, i, c.Price, i%1000, c.Author, c.Authors[int(i)%len(c.Authors)])
	for j := range 5 {
		fmt.Fprintf(&sb, `,{"attribute":%d,"language":0,"variant":0,"value":%d,"sortReverse":%d}`, c.TagsAttr, c.TagIDs[(int(i)+j*7)%len(c.TagIDs)], j)
	}
	sb.WriteString(`]}]}`)
	return []byte(sb.String())
}

func (w *distWorkload) get(base, path string) (int, []byte, error) {
	return w.do(http.MethodGet, base+path, nil)
}

func (w *distWorkload) post(base, path string, body []byte) (int, []byte, error) {
	return w.do(http.MethodPost, base+path, body)
}

func (w *distWorkload) do(method, u string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth("admin", "test-password")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// benchStart runs cfg until the benchmark ends.
func benchStart(b testing.TB, cfg Config) *Server {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		b.Fatalf("%s: %v", cfg.Target, err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			b.Errorf("%s did not shut down within 20s", cfg.Target)
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		b.Fatalf("%s: Run ended early: %v", cfg.Target, err)
	}
	return srv
}

// esRequest is one captured Elasticsearch request.
type esRequest struct {
	method, path string
	body         []byte
}

// send replays r with the go-elasticsearch client's transport.
func (r esRequest) send(ctx context.Context, es *elasticsearch.Client) error {
	req, err := http.NewRequestWithContext(ctx, r.method, r.path, bytes.NewReader(r.body))
	if err != nil {
		return err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := es.Perform(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d", r.method, r.path, resp.StatusCode)
	}
	return nil
}

// esRecorder is a reverse proxy to Elasticsearch that keeps the
// requests sent between start and stop.
type esRecorder struct {
	url  string
	mu   sync.Mutex
	on   bool
	reqs []esRequest
}

func newESRecorder(b testing.TB, esURL string) *esRecorder {
	target, err := url.Parse(esURL)
	if err != nil {
		b.Fatal(err)
	}
	r := &esRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.mu.Lock()
		if r.on {
			if len(body) == 0 {
				body = nil
			}
			r.reqs = append(r.reqs, esRequest{method: req.Method, path: req.URL.RequestURI(), body: body})
		}
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	b.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *esRecorder) start() {
	r.mu.Lock()
	r.on, r.reqs = true, nil
	r.mu.Unlock()
}

func (r *esRecorder) stop() []esRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.reqs
}

// summary names the captured requests (method, path, body size).
func (r *esRecorder) summary(reqs []esRequest) string {
	var parts []string
	for _, q := range reqs {
		parts = append(parts, fmt.Sprintf("%s %s (%d B)", q.method, q.path, len(q.body)))
	}
	return strings.Join(parts, "; ")
}

func redisClient(b testing.TB, redisURL string) *goredis.Client {
	opts, err := goredis.ParseURL(redisURL)
	if err != nil {
		b.Fatal(err)
	}
	opts.PoolSize = 16
	rdb := goredis.NewClient(opts)
	b.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// pgWriteBaseline writes, with pgx alone, the rows one created article
// stores: the transaction (from the counter), the object (its id from
// the counter), its 10 values and their versions, the object's version,
// the outbox message and its subject mark, in one transaction, the
// statements sent as one pipelined batch. The database is a fresh one
// with the store's schema (postgres.Open creates it).
type pgWriteBaseline struct {
	pool    *pgxpool.Pool
	cat     *cmsload.Catalogue
	payload []byte
	n       atomic.Int64
}

func newPGWriteBaseline(b testing.TB, cat *cmsload.Catalogue) *pgWriteBaseline {
	ctx := context.Background()
	dbURL := testenv.PostgresDatabase(b)
	st, err := postgres.Open(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	// An outbox message of the size of a one-object change event.
	return &pgWriteBaseline{pool: pool, cat: cat, payload: bytes.Repeat([]byte("e"), 600)}
}

func (p *pgWriteBaseline) write(ctx context.Context) error {
	i := p.n.Add(1)
	c := p.cat
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var txID, objID int64
	if err := tx.QueryRow(ctx, `WITH c AS (UPDATE counters SET value = value + 1 WHERE name = 'transaction' RETURNING value)
		INSERT INTO transactions (id, time, user_name, comment, branch) SELECT value, $1, $2, $3, $4 FROM c RETURNING id`,
		time.Now(), "admin", "bench", 4).Scan(&txID); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `UPDATE counters SET value = value + 1 WHERE name = 'object' RETURNING value`).Scan(&objID); err != nil {
		return err
	}
	type val struct {
		attr, lang, rev int64
		json            string
	}
	vals := []val{{1000, 201, 0, strconv.Quote(fmt.Sprintf("Written %d", i))}, {int64(c.Title), 0, 0, strconv.Quote(fmt.Sprintf("red river summit %d", i))},
		{int64(c.Price), 0, 0, fmt.Sprintf("%d.5", i%1000)}, {int64(c.Author), 0, 0, strconv.Itoa(c.Authors[int(i)%len(c.Authors)])}}
	for j := range 5 {
		vals = append(vals, val{int64(c.TagsAttr), 0, int64(j), strconv.Itoa(c.TagIDs[(int(i)+j*7)%len(c.TagIDs)])})
	}
	guid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO objects (branch, id, type_id, guid, api_identifier, deleted, created_tx, modified_tx) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		4, objID, c.Type, guid, nil, false, txID, txID)
	batch.Queue(`INSERT INTO object_versions (branch, id, tx_id, type_id, guid, api_identifier, deleted) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		4, objID, txID, c.Type, guid, nil, false)
	for _, v := range vals {
		batch.Queue(`INSERT INTO object_values (branch, object_id, attribute_id, variant, language, sort_reverse, value, unit_ref, modified_tx)
			VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, $9)`, 4, objID, v.attr, 0, v.lang, v.rev, v.json, 0, txID)
		batch.Queue(`INSERT INTO value_versions (branch, object_id, tx_id, attribute_id, variant, language, sort_reverse, value, unit_ref)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::json, $9)`, 4, objID, txID, v.attr, 0, v.lang, v.rev, v.json, 0)
	}
	batch.Queue(`INSERT INTO outbox (tx_id, subject, msg_id, payload, trace) VALUES ($1, $2, $3, $4, $5)`,
		txID, "cms.changes.4", fmt.Sprintf("tx-%d", txID), p.payload, "")
	batch.Queue(`INSERT INTO outbox_subjects (subject, tx_id) VALUES ($1, $2) ON CONFLICT (subject) DO UPDATE SET tx_id = excluded.tx_id`,
		"cms.changes.4", txID)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
