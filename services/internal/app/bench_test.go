package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Bulk-create sizes of BenchmarkBulkCreate: 10,000 objects with 5 values
// each per iteration, posted 500 objects per request.
const (
	benchObjects   = 10_000
	benchValues    = 5
	benchBatchSize = 500
)

// BenchmarkBulkCreate writes 10,000 objects × 5 values through the REST
// facade (Cms_CreateObjects, HTTP → gateway → gRPC → pkg/content → store)
// and, as a baseline in the same run, the same rows straight into a second
// store of the same engine in one transaction. It reports REST values/s,
// direct values/s and their ratio.
//
// Each engine runs twice: target "all" is `cms run`, where the in-process
// indexer consumes the change feed and writes Bleve while the requests run
// (on two cores it competes with them); target "management" is
// `cms serve --target=management`, the write path alone.
func BenchmarkBulkCreate(b *testing.B) {
	for _, target := range []string{TargetAll, TargetManagement} {
		b.Run("sqlite/"+target, func(b *testing.B) {
			dir := b.TempDir()
			benchBulkCreate(b, target, Component{}, func(ctx context.Context) (store.Store, error) {
				return sqlite.Open(ctx, filepath.Join(dir, "direct.db"))
			})
		})
		b.Run("postgres/"+target, func(b *testing.B) {
			restDB, directDB := benchPostgres(b), benchPostgres(b)
			benchBulkCreate(b, target, Component{Engine: EnginePostgres, URL: restDB}, func(ctx context.Context) (store.Store, error) {
				return postgres.Open(ctx, directDB)
			})
		})
	}
}

func benchBulkCreate(b *testing.B, target string, st Component, openDirect func(context.Context) (store.Store, error)) {
	ctx := context.Background()
	base := benchServer(b, target, st)
	typ, attrs := benchModel(b, base)
	direct, err := openDirect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()

	bodies := make([][]byte, 0, benchObjects/benchBatchSize)
	for batch := 0; batch < benchObjects/benchBatchSize; batch++ {
		bodies = append(bodies, benchBody(b, batch, typ, attrs))
	}

	var restTime, directTime time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		for _, body := range bodies {
			benchPost(b, base+"/branches/4/objects", body)
		}
		restTime += time.Since(start)

		b.StopTimer()
		start = time.Now()
		benchDirect(b, ctx, direct, i)
		directTime += time.Since(start)
		b.StartTimer()
	}
	values := float64(b.N * benchObjects * benchValues)
	restRate := values / restTime.Seconds()
	directRate := values / directTime.Seconds()
	b.ReportMetric(restRate, "values/s")
	b.ReportMetric(directRate, "direct-values/s")
	b.ReportMetric(restRate/directRate, "rest/direct")
}

// benchServer runs target on st, like startServer.
func benchServer(b *testing.B, target string, st Component) string {
	b.Helper()
	return benchServerWith(b, target, func(cfg *Config) {
		if st.Engine != "" {
			cfg.Store = st
		}
	})
}

// benchServerWith is benchServer with the configuration changed by adjust.
func benchServerWith(b *testing.B, target string, adjust func(*Config)) string {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Target = target
	adjust(&cfg)
	cfg.DataDir = b.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			b.Error("server did not shut down within 20s")
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		b.Fatalf("Run ended early: %v", err)
	}
	return "http://" + srv.HTTPAddr() + "/apis/cms/v1"
}

// benchModel creates a type and 5 String attributes on branch 4.
func benchModel(b *testing.B, base string) (int, []int) {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(`{"comment":"bench model","objects":[{"meta":{"typeRef":0,"apiIdentifier":"benchItem"}}`)
	for i := range benchValues {
		fmt.Fprintf(&sb, `,{"meta":{"typeRef":10,"apiIdentifier":"benchAttr%d"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"String"}]}`, i)
	}
	sb.WriteString(`]}`)
	ids := benchPost(b, base+"/branches/4/objects", []byte(sb.String()))
	if len(ids) != benchValues+1 {
		b.Fatalf("model ids %v", ids)
	}
	return ids[0], ids[1:]
}

func benchBody(b *testing.B, batch, typ int, attrs []int) []byte {
	type value struct {
		Attribute int    `json:"attribute"`
		Language  int    `json:"language"`
		Variant   int    `json:"variant"`
		Value     string `json:"value"`
	}
	type object struct {
		Meta   map[string]int `json:"meta"`
		Values []value        `json:"values"`
	}
	objs := make([]object, benchBatchSize)
	for i := range objs {
		o := object{Meta: map[string]int{"typeRef": typ}}
		for j, a := range attrs {
			o.Values = append(o.Values, value{Attribute: a, Value: fmt.Sprintf("item %d.%d value %d", batch, i, j)})
		}
		objs[i] = o
	}
	body, err := json.Marshal(map[string]any{"comment": "bench", "objects": objs})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchPost posts one Cms_CreateObjects request and returns the new ids.
func benchPost(b *testing.B, target string, body []byte) []int {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", "test-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("POST %s = %d: %.300s", target, resp.StatusCode, out)
	}
	var r struct {
		CreatedObjectIDs []int `json:"createdObjectIds"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatal(err)
	}
	return r.CreatedObjectIDs
}

// benchDirect writes the same shape (10,000 objects, 50,000 values) straight
// through pkg/store in one transaction.
func benchDirect(b *testing.B, ctx context.Context, st store.Store, iter int) {
	tx, err := st.Begin(ctx, store.TxMeta{User: "bench", Comment: "direct", Branch: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	ids, err := tx.NewObjectIDs(ctx, benchObjects)
	if err != nil {
		b.Fatal(err)
	}
	objs := make([]store.Object, len(ids))
	vals := make([]store.Value, 0, len(ids)*benchValues)
	g := make([]byte, 16)
	for i, id := range ids {
		_, _ = rand.Read(g)
		objs[i] = store.Object{ID: id, Branch: 4, TypeID: 3_000_000, GUID: fmt.Sprintf("%x-%x-%x-%x-%x", g[0:4], g[4:6], g[6:8], g[8:10], g[10:])}
		for j := range benchValues {
			vals = append(vals, store.Value{ObjectID: id, Branch: 4, AttributeID: int64(3_000_001 + j),
				JSON: fmt.Appendf(nil, `"item %d.%d value %d"`, iter, i, j)})
		}
	}
	if err := tx.PutObjects(ctx, objs...); err != nil {
		b.Fatal(err)
	}
	if err := tx.PutValues(ctx, vals...); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
}

// benchPostgres creates an empty database on the CMS_POSTGRES_URL server,
// dropped at cleanup (the benchmark is skipped locally without the URL).
func benchPostgres(b *testing.B) string {
	b.Helper()
	return testenv.PostgresDatabase(b)
}
