package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// TestDeliveryEndToEndDistributed runs the distributed setup the way
// Kubernetes does: three `cms serve` processes (here: servers in this test
// process, each with its own components and connections), one per target
// (management, indexer, delivery), on PostgreSQL (a fresh database),
// Elasticsearch and Redis (a unique prefix) and NATS; then it drives
// runDeliveryScenario over HTTP only.
//
// NATS is the shared server of CMS_NATS_URL with this run's prefix as the
// events namespace (its own stream, subjects and consumers), as two
// installations sharing one NATS would run.
func TestDeliveryEndToEndDistributed(t *testing.T) {
	start := time.Now()
	config, natsSrv := isolatedDistributed(t, "e2e")
	redisURL, prefix := config("").Cache.URL, config("").Cache.Prefix
	serve := func(target string) string { return "http://" + startConfigured(t, config(target)).HTTPAddr() }
	// Management first: it bootstraps the system model and the admin.
	mgmt := serve(TargetManagement)
	serve(TargetIndexer)
	deliv := serve(TargetDelivery)
	t.Logf("three targets serving after %v", time.Since(start).Round(time.Millisecond))

	res := runDeliveryScenario(t, mgmt, deliv, func() int { return redisKeys(t, redisURL, prefix+"k:delivery:http:*") })
	// The evicted answer was in Redis, under this run's prefix.
	if res.cachedKeys == 0 {
		t.Errorf("no Delivery HTTP cache entry in Redis under %q before the update", prefix)
	}
	// Redis is shared by the replicas: one durable consumer for all.
	if cs := invalidatorConsumers(t, natsSrv); len(cs) != 1 || cs[0].Durable != "delivery-invalidator" {
		t.Errorf("invalidator consumers with a Redis cache = %+v, want the durable delivery-invalidator", cs)
	}
	t.Logf("distributed: write → Delivery %v; update → evicted answer %v; total %v",
		res.published.Round(time.Millisecond), res.evicted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// TestDeliveryReadYourWritesBeforeIndexing: a user with a read grant asks
// Delivery for content written a moment ago with X-Cms-Min-Version while
// the indexer is not running yet (it starts a second later, as a pod
// would): Delivery must wait for the index (up to X-Cms-Max-Wait), then
// answer 200 with the content, for the reader as for the administrator.
//
// Both used to fail: the reader got 404 "branch 4 not found" (read
// access was checked against the index before waiting for the version)
// and the administrator 503 while the indexer created the state index
// (the first read error ended the wait).
func TestDeliveryReadYourWritesBeforeIndexing(t *testing.T) {
	config, _ := isolatedDistributed(t, "ryw")
	mgmt := "http://" + startConfigured(t, config(TargetManagement)).HTTPAddr()
	deliv := "http://" + startConfigured(t, config(TargetDelivery)).HTTPAddr()
	admin := httpClient{t, mgmt, "admin", "test-password"}
	admin.create(obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, 4, 0)))
	w := admin.create(obj(0, "note", v(1000, 201, "Note")))
	w = admin.create(obj(w.CreatedObjectIDs[0], "first", v(1000, 201, "First note")))

	// Both ask before the indexer runs; it starts a second later.
	type answer struct {
		user string
		r    httpResult
	}
	done := make(chan answer, 2)
	started := time.Now()
	for user, pass := range map[string]string{"reader": "reader-pw", "admin": "test-password"} {
		go func() {
			done <- answer{user, httpClient{t, deliv, user, pass}.do(http.MethodGet, "/delivery/api/branches/4/objects/first", "",
				"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "20s")}
		}()
	}
	time.Sleep(time.Second)
	startConfigured(t, config(TargetIndexer))
	for range 2 {
		a := <-done
		if a.r.code != http.StatusOK || !strings.Contains(string(a.r.body), `"displayName":"First note"`) {
			t.Errorf("%s: GET /delivery/api/branches/4/objects/first with X-Cms-Min-Version %d, indexer not yet running = %d after %v, want 200 once indexed: %s",
				a.user, w.Transaction.ID, a.r.code, time.Since(started).Round(time.Millisecond), a.r.body)
		}
	}
}

// TestDeliveryEndToEndEmbedded runs the same scenario on `cms run`: one
// process, SQLite, embedded NATS, Bleve and the memory cache, whose
// invalidator reads through an ephemeral consumer of its own.
func TestDeliveryEndToEndEmbedded(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	res := runDeliveryScenario(t, base, base, nil)
	// The memory cache is per process: its invalidator reads through an
	// ephemeral consumer the server forgets when the process goes away.
	cs := invalidatorConsumers(t, srv.comps.Events)
	if len(cs) != 1 || cs[0].Durable != "" || cs[0].InactiveThreshold != events.DefaultInactiveThreshold ||
		cs[0].DeliverPolicy != jetstream.DeliverByStartTimePolicy {
		t.Errorf("invalidator consumers with a memory cache = %+v, want one ephemeral consumer from the start time", cs)
	}
	t.Logf("embedded: write → Delivery %v; update → evicted answer %v",
		res.published.Round(time.Millisecond), res.evicted.Round(time.Millisecond))
}

// startConfigured is startServer with a given configuration; the server's
// log is printed when the test fails.
func startConfigured(t *testing.T, cfg Config) *Server {
	t.Helper()
	srv, _ := startLogged(t, cfg)
	return srv
}

// isolatedDistributed returns the configuration of one target of an
// installation of its own on the real servers: a fresh PostgreSQL
// database and a unique prefix (name + time) for the Elasticsearch
// indexes, the Redis keys (deleted afterwards) and the NATS stream; and a
// bus on that stream.
func isolatedDistributed(t testing.TB, name string) (func(target string) Config, *natsjs.Bus) {
	t.Helper()
	pgURL := testenv.PostgresDatabase(t)
	esURL := testenv.URL(t, testenv.ElasticsearchURL)
	redisURL := testenv.URL(t, testenv.RedisURL)
	prefix := fmt.Sprintf("%s%d", name, time.Now().UnixNano())
	natsURL, bus := sharedNATS(t, prefix)
	cleanupRedis(t, redisURL, prefix)
	cleanupElasticsearch(t, esURL, prefix)
	return func(target string) Config {
		cfg := DistributedConfig()
		cfg.DrainDelay = 0 // nothing balances load in front of a test
		cfg.Target = target
		cfg.Store.URL, cfg.Events.URL, cfg.Search.URL, cfg.Cache.URL = pgURL, natsURL, esURL, redisURL
		cfg.Search.Prefix, cfg.Cache.Prefix, cfg.Events.Prefix, cfg.Blobs.Prefix = prefix, prefix, prefix, prefix
		cfg.DataDir = t.TempDir()
		cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.AdminPassword = "test-password"
		// The installation's shared token key (PostgreSQL: no key, no
		// bearer tokens).
		cfg.AuthTokenKey = "test-token-key-" + prefix + strings.Repeat("k", 32)
		return cfg
	}, bus
}

// cleanupElasticsearch deletes the indexes named with prefix when the
// test ends (the servers are stopped by then: cleanups run last first).
func cleanupElasticsearch(t testing.TB, esURL, prefix string) {
	t.Cleanup(func() { testenv.DeleteIndexes(t, esURL, prefix) })
}

// sharedNATS returns the URL of the NATS of CMS_NATS_URL and a bus on it
// in the events namespace prefix (the servers under test use the same);
// the namespace's streams (the blob bucket's too) are deleted afterwards.
func sharedNATS(t testing.TB, prefix string) (string, *natsjs.Bus) {
	t.Helper()
	url := testenv.URL(t, testenv.NATSURL)
	b, err := natsjs.Connect(context.Background(), url, natsjs.Options{Stream: events.StreamConfig{Namespace: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// The change stream and whatever the servers made in the
		// namespace (the job queue).
		setups.DeleteNATSNamespace(ctx, t, b.JetStream(), prefix)
		_ = b.Close()
	})
	return url, b
}

// invalidatorConsumers returns the JetStream configs of the Delivery
// invalidator's consumers on bus.
func invalidatorConsumers(t *testing.T, bus *natsjs.Bus) []jetstream.ConsumerConfig {
	t.Helper()
	names, err := bus.ConsumerNames(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.ConsumerConfig
	for _, n := range names {
		if !strings.HasPrefix(n, "delivery-invalidator") {
			continue
		}
		c, err := bus.JetStream().Consumer(t.Context(), bus.JetStreamName(), n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.CachedInfo().Config)
	}
	return out
}

// cleanupRedis deletes this run's keys when the test ends.
func cleanupRedis(t testing.TB, redisURL, prefix string) {
	t.Cleanup(func() { testenv.DeleteRedisKeys(t, redisURL, prefix) })
}

// redisKeys counts the keys matching pattern (0 when redisURL is empty).
func redisKeys(t *testing.T, redisURL, pattern string) int {
	t.Helper()
	opts, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	n := 0
	it := rdb.Scan(t.Context(), 0, pattern, 500).Iterator()
	for it.Next(t.Context()) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// httpClient calls one base URL as one user.
type httpClient struct {
	t          *testing.T
	base       string
	user, pass string
}

type httpResult struct {
	code   int
	header http.Header
	body   []byte
}

func (c httpClient) do(method, path, body string, hdr ...string) httpResult {
	c.t.Helper()
	r, err := c.send(method, path, body, hdr...)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// send is do returning a failure to send instead of failing the test, for
// goroutines other than the test's own (which must not call t.Fatal).
func (c httpClient) send(method, path, body string, hdr ...string) (httpResult, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return httpResult{}, err
	}
	req.SetBasicAuth(c.user, c.pass)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return httpResult{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return httpResult{resp.StatusCode, resp.Header, b}, err
}

// doUntilAvailable is do, sent again as a client would while the answer
// is 503 with Retry-After (a component of a freshly started system, e.g.
// Elasticsearch answering "all shards failed" while the indexer creates
// the index), for at most within; it returns the last answer.
func (c httpClient) doUntilAvailable(within time.Duration, method, path, body string, hdr ...string) httpResult {
	c.t.Helper()
	for deadline := time.Now().Add(within); ; {
		r := c.do(method, path, body, hdr...)
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || time.Now().After(deadline) {
			return r
		}
		c.t.Logf("%s %s: 503 with Retry-After, sent again: %s", method, path, r.body)
		time.Sleep(200 * time.Millisecond)
	}
}

// must calls and fails the test unless the status is want.
func (c httpClient) must(want int, method, path, body string, hdr ...string) httpResult {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	if r.code != want {
		c.t.Fatalf("%s %s = %d, want %d: %s", method, path, r.code, want, r.body)
	}
	return r
}

// write is a Management write's answer.
type write struct {
	Transaction struct {
		ID int64 `json:"id"`
	} `json:"transaction"`
	CreatedObjectIDs []int64 `json:"createdObjectIds"`
}

func (c httpClient) create(objects ...string) write {
	c.t.Helper()
	r := c.must(http.StatusCreated, http.MethodPost, "/apis/cms/v1/branches/4/objects", `{"objects":[`+strings.Join(objects, ",")+`]}`)
	var w write
	if err := json.Unmarshal(r.body, &w); err != nil || len(w.CreatedObjectIDs) != len(objects) {
		c.t.Fatalf("create answer %s: %v", r.body, err)
	}
	return w
}

// v is one value row of a Management write; sort >= 0 makes it a row of a
// multi-valued attribute.
func v(attr int64, lang int, value any, sort ...int) string {
	b, _ := json.Marshal(value)
	s := fmt.Sprintf(`{"attribute":%d,"language":%d,"variant":0,"value":%s`, attr, lang, b)
	if len(sort) > 0 {
		s += fmt.Sprintf(`,"sortReverse":%d`, sort[0])
	}
	return s + "}"
}

func obj(typeRef int64, apiID string, values ...string) string {
	meta := fmt.Sprintf(`"typeRef":%d`, typeRef)
	if apiID != "" {
		meta += fmt.Sprintf(`,"apiIdentifier":%q`, apiID)
	}
	return `{"meta":{` + meta + `},"values":[` + strings.Join(values, ",") + `]}`
}

// scenarioResult reports what the scenario measured.
type scenarioResult struct {
	published  time.Duration // last write → visible in Delivery (read-your-writes)
	evicted    time.Duration // update → the cached answer replaced
	cachedKeys int           // Delivery HTTP cache entries in Redis (distributed only)
}

// deliveryObj is the part of a Delivery object the scenario checks.
type deliveryObj struct {
	DisplayName string `json:"displayName"`
	Meta        struct {
		ID            int64  `json:"id"`
		Type          string `json:"type"`
		APIIdentifier string `json:"apiIdentifier"`
	} `json:"meta"`
	Props map[string]any `json:"props"`
}

type deliveryList struct {
	Count int           `json:"count"`
	Objs  []deliveryObj `json:"objs"`
	Refs  []deliveryObj `json:"refs"`
}

func decodeList(t *testing.T, r httpResult) deliveryList {
	t.Helper()
	var l deliveryList
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatalf("list: %v: %s", err, r.body)
	}
	return l
}

// summary is "[displayName:headline …]" in list order.
func (l deliveryList) summary() string {
	var s []string
	for _, o := range l.Objs {
		s = append(s, fmt.Sprintf("%s:%v", o.DisplayName, o.Props["headline"]))
	}
	return fmt.Sprint(s)
}

// runDeliveryScenario writes a small model and content through Management
// at mgmt as the administrator and reads it back from Delivery at deliv as
// a user with a read grant only.
// cachedKeys, when set, counts the cached Delivery HTTP answers.
func runDeliveryScenario(t *testing.T, mgmt, deliv string, cachedKeys func() int) scenarioResult {
	t.Helper()
	var res scenarioResult
	admin := httpClient{t, mgmt, "admin", "test-password"}
	reader := httpClient{t, deliv, "reader", "reader-pw"}
	readerOnMgmt := httpClient{t, mgmt, "reader", "reader-pw"}

	// The model: a language-dependent String, a multi ObjRef, a
	// language-independent String for facets, and a type.
	attr := func(api, dataType string, multi, langDep bool) string {
		return obj(10, api, v(1000, 201, api), v(1001, 0, dataType), v(1004, 0, multi), v(1017, 0, langDep))
	}
	w := admin.create(attr("headline", "String", false, true), attr("related", "ObjRef", true, false),
		attr("category", "String", false, false), obj(0, "article", v(1000, 201, "Article")))
	headline, related, category, article := w.CreatedObjectIDs[0], w.CreatedObjectIDs[1], w.CreatedObjectIDs[2], w.CreatedObjectIDs[3]
	// The delivery user: a read grant on branch 4, nothing else.
	admin.create(obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, 4, 0)))
	// Content: alpha first, then two objects referring to it; beta has no
	// German headline (de-DE falls back to en-US).
	w = admin.create(obj(article, "alpha", v(1000, 201, "Alpha"), v(headline, 201, "Hello Alpha"),
		v(headline, 202, "Hallo Alpha"), v(category, 0, "news")))
	alpha := w.CreatedObjectIDs[0]
	w = admin.create(obj(article, "beta", v(1000, 201, "Beta"), v(headline, 201, "Hello Beta"), v(category, 0, "news"),
		v(related, 0, alpha, 0)))
	beta := w.CreatedObjectIDs[0]
	last := admin.create(obj(article, "gamma", v(1000, 201, "Gamma"), v(headline, 201, "Hello Gamma"), v(headline, 202, "Hallo Gamma"),
		v(category, 0, "blog"), v(related, 0, alpha, 0), v(related, 0, beta, 1)))
	gamma := last.CreatedObjectIDs[0]
	written := time.Now()

	// A user with read grants only may not write through Management.
	if r := readerOnMgmt.do(http.MethodPost, "/apis/cms/v1/branches/4/objects", `{"objects":[`+obj(article, "", v(1000, 201, "Nope"))+`]}`); r.code != http.StatusForbidden {
		t.Fatalf("reader's Management write = %d, want 403: %s", r.code, r.body)
	}

	// Read-your-writes: Delivery waits until the index shows the last write.
	// The administrator asks first: for a user without admin rights
	// Delivery checks the branch against the index before it waits, and
	// answers 404 while the branch is not indexed yet (see
	// TestDeliveryReadYourWritesBeforeIndexing).
	minVersion := strconv.FormatInt(last.Transaction.ID, 10)
	list := "/delivery/api/branches/4/types/article/objects?lang=en-US&sort=" + url.QueryEscape("displayName desc")
	// While the indexer still creates the indexes Delivery may answer 503
	// with Retry-After instead of waiting (same test): retry as a client
	// would.
	if r := (httpClient{t, deliv, "admin", "test-password"}).doUntilAvailable(20*time.Second, http.MethodGet, list, "",
		"X-Cms-Min-Version", minVersion, "X-Cms-Max-Wait", "20s"); r.code != http.StatusOK {
		t.Fatalf("GET %s (X-Cms-Min-Version %s) = %d: %s", list, minVersion, r.code, r.body)
	}
	res.published = time.Since(written)
	// Sorted by displayName descending.
	r := reader.must(http.StatusOK, http.MethodGet, list, "", "X-Cms-Min-Version", minVersion)
	l := decodeList(t, r)
	if got := l.summary(); got != "[Gamma:Hello Gamma Beta:Hello Beta Alpha:Hello Alpha]" {
		t.Fatalf("list (lang=en-US, sort displayName desc) = %v\n%s", got, r.body)
	}
	g := l.Objs[0]
	if g.Meta.ID != gamma || g.Meta.Type != "article" || g.Meta.APIIdentifier != "gamma" ||
		fmt.Sprint(g.Props["related"]) != fmt.Sprint([]any{float64(alpha), float64(beta)}) {
		t.Fatalf("gamma = %+v", g)
	}
	// German where there is German, English (the fallback of de-DE) where
	// not; references resolved into refs, in the same language.
	blogList := "/delivery/api/branches/4/types/article/objects?lang=de-DE&resolve=related&filter=" + url.QueryEscape(`category="blog"`)
	r = reader.must(http.StatusOK, http.MethodGet, blogList, "")
	l = decodeList(t, r)
	if got := l.summary(); got != "[Gamma:Hallo Gamma]" {
		t.Fatalf("list (lang=de-DE, category=blog) = %v\n%s", got, r.body)
	}
	refs := map[int64]string{}
	for _, o := range l.Refs {
		refs[o.Meta.ID] = fmt.Sprintf("%s:%v", o.DisplayName, o.Props["headline"])
	}
	if want := map[int64]string{alpha: "Alpha:Hallo Alpha", beta: "Beta:Hello Beta"}; fmt.Sprint(refs) != fmt.Sprint(want) {
		t.Fatalf("refs (resolve=related, de-DE) = %v, want %v\n%s", refs, want, r.body)
	}
	// Sorting by displayName in a language whose names fall back: the
	// display names shown are the English ones, so is the order (the
	// indexer fills the German sort field along the fallback).
	r = reader.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/article/objects?lang=de-DE&sort="+url.QueryEscape("displayName desc"), "")
	if got := decodeList(t, r).summary(); got != "[Gamma:Hallo Gamma Beta:Hello Beta Alpha:Hallo Alpha]" {
		t.Errorf("lang=de-DE sort=displayName desc (names only in en-US) = %v, want Gamma Beta Alpha", got)
	}

	// A filter.
	r = reader.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/article/objects?lang=en-US&filter="+
		url.QueryEscape(`category="news"`)+"&sort=displayName", "")
	if got := decodeList(t, r).summary(); got != "[Alpha:Hello Alpha Beta:Hello Beta]" {
		t.Fatalf("filter category=news = %v: %s", got, r.body)
	}
	r = reader.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/article/count?filter="+url.QueryEscape(`headline:"hallo"`)+"&lang=de-DE", "")
	if strings.TrimSpace(string(r.body)) != `{"count":2}` {
		t.Fatalf("count headline:hallo (de-DE) = %s, want 2", r.body)
	}

	// Facets.
	r = reader.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/article/occurrences?fields=category,related&take=10", "")
	var occ struct {
		Occurrences map[string]struct {
			NotNull int `json:"notNullOccurrences"`
			Null    int `json:"nullOccurrences"`
			Values  []struct {
				Value any `json:"value"`
				Count int `json:"count"`
			} `json:"valueOccurrences"`
		} `json:"occurrences"`
	}
	if err := json.Unmarshal(r.body, &occ); err != nil {
		t.Fatalf("occurrences: %v: %s", err, r.body)
	}
	cat, rel := occ.Occurrences["category"], occ.Occurrences["related"]
	if cat.NotNull != 3 || fmt.Sprint(cat.Values) != "[{blog 1} {news 2}]" {
		t.Errorf("category occurrences = %+v: %s", cat, r.body)
	}
	if rel.NotNull != 2 || rel.Null != 1 || fmt.Sprint(rel.Values) != fmt.Sprintf("[{%d 2} {%d 1}]", alpha, beta) {
		t.Errorf("related occurrences = %+v: %s", rel, r.body)
	}

	// ETag and 304; the answer is cached.
	single := "/delivery/api/branches/4/objects/alpha?lang=de-DE"
	first := reader.must(http.StatusOK, http.MethodGet, single, "")
	etag := first.header.Get("ETag")
	if etag == "" || !strings.Contains(string(first.body), `"headline":"Hallo Alpha"`) {
		t.Fatalf("single: ETag %q, body %s", etag, first.body)
	}
	reader.must(http.StatusNotModified, http.MethodGet, single, "", "If-None-Match", etag)
	if again := reader.must(http.StatusOK, http.MethodGet, single, ""); again.header.Get("ETag") != etag || !bytes.Equal(again.body, first.body) {
		t.Fatalf("second read differs: %s %s", again.header.Get("ETag"), again.body)
	}
	if cachedKeys != nil {
		res.cachedKeys = cachedKeys()
	}

	// An update through Management replaces the cached answer: the change
	// event evicts it (the cache TTL is a day).
	upd := admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, alpha, article, v(headline, 202, "Servus Alpha")))
	updated := time.Now()
	deadline := updated.Add(20 * time.Second)
	for {
		// 304 while the cached answer (under the old ETag) is still served.
		r = reader.do(http.MethodGet, single, "", "If-None-Match", etag)
		if r.code != http.StatusOK && r.code != http.StatusNotModified {
			t.Fatalf("GET %s after the update = %d: %s", single, r.code, r.body)
		}
		if r.code == http.StatusOK && strings.Contains(string(r.body), `"headline":"Servus Alpha"`) {
			res.evicted = time.Since(updated)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20s after the update Delivery still answers %d %s (update: %s)", r.code, r.body, upd.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.header.Get("ETag") == etag {
		t.Errorf("new body under the old ETag %s", etag)
	}
	// The cached list that resolved alpha as a reference was evicted by
	// the same event (it depends on alpha through refs only).
	r = reader.must(http.StatusOK, http.MethodGet, blogList, "")
	l = decodeList(t, r)
	if len(l.Refs) != 2 || !strings.Contains(string(r.body), `"headline":"Servus Alpha"`) {
		t.Errorf("list resolving alpha after the update: %s", r.body)
	}
	return res
}
