package app

import (
	"net/http"
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
				wantLine(t, lines, "search columns", doctor.Warn, "objects (budget 1 KiB)")
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

func grepLines(s, substr string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
