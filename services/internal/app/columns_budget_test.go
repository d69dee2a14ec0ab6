package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/doctor"
)

// TestColumnsOverBudget: an embedded search index whose column index
// outgrows searchColumnsMaxBytes keeps answering (from Bleve alone) and
// says so: one WARN line, cms_search_columns_over_budget 1 on /metrics,
// and a warning of `cms doctor`; within the budget doctor reports it OK.
func TestColumnsOverBudget(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget int64
		over   bool
	}{{"within", 0, false}, {"over", 1 << 10, true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
			cfg.AdminPassword = "test-password"
			cfg.SearchColumnsMaxBytes = c.budget
			srv, logs := startLogged(t, cfg)
			base := "http://" + srv.HTTPAddr()
			admin := httpClient{t, base, "admin", "test-password"}
			var last int64
			for i := range 20 {
				w := admin.create(obj(0, "colType"+strconv.Itoa(i), v(1000, 201, "Object "+strconv.Itoa(i))))
				last = w.Transaction.ID
			}
			// A list sorted by name: answered from the columns when they fit.
			r := admin.do(http.MethodGet, "/delivery/api/branches/4/objects?sort=displayName&take=5", "",
				"X-Cms-Min-Version", strconv.FormatInt(last, 10))
			if r.code != http.StatusOK || !strings.Contains(string(r.body), `"count":5`) {
				t.Fatalf("list: %d %s", r.code, r.body)
			}
			metrics := string(admin.do(http.MethodGet, "/metrics", "").body)
			overLine := `cms_search_columns_over_budget{index="objects"} `
			want := "0"
			if c.over {
				want = "1"
			}
			if !strings.Contains(metrics, overLine+want) {
				t.Errorf("/metrics lacks %s%s:\n%s", overLine, want, grepLines(metrics, "cms_search_columns"))
			}
			if n := strings.Count(logs.String(), "search columns over budget"); (n == 1) != c.over {
				t.Errorf("%d WARN lines about the budget", n)
			}
			dc := cfg
			dc.HTTPAddr = srv.HTTPAddr()
			lines, _ := runDoctor(t, dc)
			if c.over {
				wantLine(t, lines, "search columns", doctor.Warn, "objects (budget 1 KiB: all columns freed")
			} else {
				wantLine(t, lines, "search columns", doctor.OK, "within budget: ")
			}
		})
	}
	// No process answering: not checked, no warning.
	cfg := DefaultConfig()
	cfg.HTTPAddr = "127.0.0.1:1"
	if l := checkColumns(t.Context(), cfg); l.Verdict != doctor.OK || !strings.Contains(l.Detail, "not checked") {
		t.Errorf("nothing running: %+v", l)
	}
}

// `cms doctor` names the fields an index freed for its budget (read from
// cms_search_columns_freed) while it still holds the others.
func TestColumnsDoctorFreedFields(t *testing.T) {
	const metrics = `# TYPE cms_search_columns_bytes gauge
cms_search_columns_bytes{index="objects"} 3.3554432e+07
cms_search_columns_bytes{index="versions"} 1024
# TYPE cms_search_columns_budget_bytes gauge
cms_search_columns_budget_bytes{index="objects"} 6.7108864e+07
cms_search_columns_budget_bytes{index="versions"} 6.7108864e+07
# TYPE cms_search_columns_over_budget gauge
cms_search_columns_over_budget{index="objects"} 1
cms_search_columns_over_budget{index="versions"} 0
# TYPE cms_search_columns_freed gauge
cms_search_columns_freed{field="price",index="objects"} 1
cms_search_columns_freed{field="color",index="objects"} 1
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, metrics)
	}))
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.HTTPAddr = strings.TrimPrefix(srv.URL, "http://")
	l := checkColumns(t.Context(), cfg)
	want := "objects (budget 64.0 MiB: 32.0 MiB held, fields freed price, color; searches reading them are answered by Bleve"
	if l.Verdict != doctor.Warn || !strings.Contains(l.Detail, want) || strings.Contains(l.Detail, "versions") {
		t.Errorf("doctor: %+v\nwant %q", l, want)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
