package app

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/doctor"
)

// runDoctor runs `cms doctor`'s checks for cfg and indexes the lines by
// subject.
func runDoctor(t *testing.T, cfg Config) (map[string]doctor.Line, []doctor.Line) {
	t.Helper()
	lines := doctor.Run(context.Background(), DoctorChecks(cfg), 10*time.Second)
	bySubject := map[string]doctor.Line{}
	var report strings.Builder
	_ = doctor.Print(&report, lines)
	t.Logf("doctor:\n%s", report.String())
	for _, l := range lines {
		bySubject[l.Subject] = l
	}
	return bySubject, lines
}

func wantLine(t *testing.T, lines map[string]doctor.Line, subject string, v doctor.Verdict, detail string) {
	t.Helper()
	l, ok := lines[subject]
	switch {
	case !ok:
		t.Errorf("no line %q", subject)
	case l.Verdict != v || !strings.Contains(l.Detail, detail):
		t.Errorf("%s: %s %q, want %s containing %q", subject, l.Verdict, l.Detail, v, detail)
	case v != doctor.OK && l.Fix == "":
		t.Errorf("%s: %s without a fix", subject, l.Verdict)
	}
}

// TestDoctorDistributed runs the checks of `cms doctor` against the real
// PostgreSQL, NATS, Elasticsearch and Redis: before the installation
// started (migrations not applied, no index, no bucket: warnings), after
// it served a write (everything current, the indexer's consumer listed,
// caught up, nothing parked), and with NATS unreachable (a failure, exit
// code 2). Nothing it checks is changed by it: the schema stays
// unmigrated until the server starts.
func TestDoctorDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "doctor")
	cfg := config(TargetAll)
	prefix := cfg.Search.Prefix

	before, _ := runDoctor(t, cfg)
	wantLine(t, before, "store postgres", doctor.OK, "PostgreSQL ")
	wantLine(t, before, "store migrations", doctor.Warn, "not applied: 001_initial")
	wantLine(t, before, "clock vs postgres", doctor.OK, " s")
	wantLine(t, before, "events nats", doctor.OK, "nats-server ")
	wantLine(t, before, "search index", doctor.Warn, "not readable")
	wantLine(t, before, "blobs bucket", doctor.Warn, "does not exist yet")
	wantLine(t, before, "setting adminPassword", doctor.OK, "not the default")
	wantLine(t, before, "setting authTokenKey", doctor.OK, "signed")
	if again, _ := runDoctor(t, cfg); again["store migrations"].Verdict != doctor.Warn {
		t.Error("doctor applied the migrations")
	}

	srv := startConfigured(t, cfg)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "doctorType", v(1000, 201, "Doctor")))
	// The indexer creates its indexes first, which takes seconds on a busy
	// Elasticsearch: wait for the write to be visible.
	for deadline := time.Now().Add(60 * time.Second); ; {
		r := admin.do(http.MethodGet, "/delivery/api/branches/4/objects/doctorType", "",
			"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10))
		if r.code == http.StatusOK {
			break
		}
		if r.code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the write is not visible in Delivery: %d %s", r.code, r.body)
		}
	}

	after, lines := runDoctor(t, cfg)
	wantLine(t, after, "store migrations", doctor.OK, "applied")
	wantLine(t, after, "stream "+prefix+"_CMS_CHANGES", doctor.OK, "messages")
	wantLine(t, after, "stream "+prefix+"_CMS_JOBS", doctor.OK, "messages")
	wantLine(t, after, "consumer indexer", doctor.OK, "pending")
	wantLine(t, after, "search index", doctor.OK, "mapping current")
	wantLine(t, after, "blobs bucket", doctor.OK, prefix+"_CMS_BLOBS")
	wantLine(t, after, "indexer lag", doctor.OK, "caught up")
	wantLine(t, after, "indexer parked", doctor.OK, "none")
	wantLine(t, after, "cache redis", doctor.OK, "Redis ")
	if code := doctor.ExitCode(lines); code == 2 {
		t.Errorf("exit code 2 on a working installation")
	}

	down := cfg
	down.Events.URL = "nats://127.0.0.1:1"
	start := time.Now()
	broken, lines := runDoctor(t, down)
	wantLine(t, broken, "events nats", doctor.Fail, "")
	wantLine(t, broken, "store migrations", doctor.OK, "applied")
	if code := doctor.ExitCode(lines); code != 2 {
		t.Errorf("exit code %d with NATS unreachable, want 2", code)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("doctor took %v with NATS unreachable", el)
	}
}

// TestDoctorRiskySettings: each risky setting is a warning with its fix;
// the default password fails on a shared store and warns on a laptop.
func TestDoctorRiskySettings(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.CORSOrigins = []string{"*"}
	cfg.WebhookAllowPrivate = true
	cfg.RenderSeparateOrigin = true
	lines := map[string]doctor.Line{}
	for _, l := range riskySettings(cfg) {
		lines[l.Subject] = l
	}
	wantLine(t, lines, "setting adminPassword", doctor.Warn, "default password")
	wantLine(t, lines, "setting corsOrigins", doctor.Warn, "every origin")
	wantLine(t, lines, "setting webhookAllowPrivate", doctor.Warn, "private addresses")
	wantLine(t, lines, "setting renderSeparateOrigin", doctor.Warn, "without their sandbox")
	wantLine(t, lines, "setting authTokenKey", doctor.OK, "")
	cfg.Store.Engine = EnginePostgres
	for _, l := range riskySettings(cfg) {
		lines[l.Subject] = l
	}
	wantLine(t, lines, "setting adminPassword", doctor.Fail, "default password")
	wantLine(t, lines, "setting authTokenKey", doctor.Warn, "bearer tokens")
	// The embedded components: their files, nothing opened.
	emb := DefaultConfig()
	emb.DataDir = t.TempDir()
	byS, _ := runDoctor(t, emb)
	wantLine(t, byS, "store sqlite", doctor.Warn, "does not exist yet")
	wantLine(t, byS, "search bleve", doctor.Warn, "does not exist yet")
}

// TestDoctorEmbedded: on the data directory of a running `cms run`, the
// SQLite file is read (read-only, beside the server) with every migration
// applied; NATS and Bleve are inside the process and only their files are
// looked at.
func TestDoctorEmbedded(t *testing.T) {
	srv := startServer(t)
	lines, _ := runDoctor(t, srv.cfg)
	wantLine(t, lines, "store sqlite", doctor.OK, "SQLite ")
	wantLine(t, lines, "store migrations", doctor.OK, "applied")
	wantLine(t, lines, "events embedded NATS", doctor.OK, "embedded")
	wantLine(t, lines, "search bleve", doctor.OK, "embedded")
	wantLine(t, lines, "blobs fs", doctor.OK, "writable")
	wantLine(t, lines, "cache memory", doctor.OK, "")
}
