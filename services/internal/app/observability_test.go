package app

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// The dashboard and alert rules deploy/observability ships.
var (
	dashboardFile = filepath.Join("..", "..", "..", "deploy", "observability", "cms-dashboard.json")
	alertsFile    = filepath.Join("..", "..", "..", "deploy", "observability", "cms-alerts.yaml")
	alertTests    = filepath.Join("..", "..", "..", "deploy", "observability", "cms-alerts_test.yaml")
)

// metricName matches the platform's and the Go client's metric names in
// a PromQL expression.
var metricName = regexp.MustCompile(`\b(?:cms|go|process)_[a-z0-9_]+\b`)

// writtenByPrometheus are names a rule may use that Prometheus itself
// writes for every scrape target, not the platform.
var writtenByPrometheus = []string{"up"}

// TestDashboardAndAlertsNameExportedMetrics: every metric a panel of the
// shipped Grafana dashboard or an alert rule names is one a running
// process exports on /metrics (after a write, a read and a job, so the
// per-call series exist); the dashboard and the rules cover what
// operators watch.
func TestDashboardAndAlertsNameExportedMetrics(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "observedType", v(1000, 201, "Observed")))
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects/observedType", "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10))

	exported := exportedNames(t, base)
	for _, want := range []string{"cms_component_up", "cms_jobs_pending", "cms_jobs_running", "cms_jobs_finished_total",
		"cms_webhook_attempts_total", "cms_grpc_call_duration_seconds_bucket"} {
		if !exported[want] {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr     string `json:"expr"`
				Exemplar bool   `json:"exemplar"`
			} `json:"targets"`
		} `json:"panels"`
	}
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			// A latency panel shows the exemplars (trace ids) the histogram carries.
			if strings.Contains(tg.Expr, "cms_grpc_call_duration_seconds_bucket") && !tg.Exemplar {
				t.Errorf("panel %q shows latency without exemplars (\"exemplar\": true)", p.Title)
			}
		}
	}
	rules, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs = append(exprs, string(rules))
	named := map[string]bool{}
	for _, e := range exprs {
		for _, m := range metricName.FindAllString(e, -1) {
			named[m] = true
			if !exported[m] {
				t.Errorf("the dashboard or the alert rules name %s, which /metrics does not export", m)
			}
		}
	}
	if !strings.Contains(string(rules), "up{") || !slices.Contains(writtenByPrometheus, "up") {
		t.Error("the rules should alert on a process that does not answer scrapes (up)")
	}
	// What operators watch: each appears in a panel, and the alerted ones
	// in a rule.
	for _, m := range []string{"cms_grpc_calls_total", "cms_grpc_call_duration_seconds_bucket", "cms_indexer_lag_seconds",
		"cms_indexer_parked_events", "cms_delivery_cache_requests_total", "cms_render_cache_requests_total", "cms_jobs_pending",
		"cms_webhook_attempts_total", "cms_live_subscribers", "cms_component_up"} {
		if !named[m] {
			t.Errorf("neither the dashboard nor the rules show %s", m)
		}
	}
	for _, m := range []string{"cms_indexer_lag_seconds", "cms_indexer_parked_events", "cms_grpc_calls_total", "cms_component_up",
		"cms_webhook_attempts_total"} {
		if !metricName.MatchString(string(rules)) || !strings.Contains(string(rules), m) {
			t.Errorf("no alert rule on %s", m)
		}
	}
}

// exportedNames reads the metric names of /metrics once the per-call
// series of the write and the read are there.
func exportedNames(t *testing.T, base string) map[string]bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] == '#' {
				continue
			}
			if i := strings.IndexAny(line, "{ "); i > 0 {
				names[line[:i]] = true
			}
		}
		_ = resp.Body.Close()
		if names["cms_grpc_calls_total"] && names["cms_indexer_events_total"] || time.Now().After(deadline) {
			return names
		}
	}
}

// TestAlertRulesPassPromtool: the shipped rules pass `promtool check
// rules`, and `promtool test rules` shows each alert firing on the series
// it is for (deploy/observability/cms-alerts_test.yaml).
func TestAlertRulesPassPromtool(t *testing.T) {
	promtool := testenv.Tool(t, testenv.Promtool)
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertTests}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
