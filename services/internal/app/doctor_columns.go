package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cmsplatform/cms/pkg/doctor"
)

// checkColumns reads the column index of each embedded search index from
// the metrics of the running `cms run` (its HTTP address): the index is
// inside that process, and Bleve locks its files. An index whose columns
// outgrew their budget is a warning, naming the fields whose columns were
// freed: the lists, sorts and occurrences reading them are answered by
// Bleve (all of them when nothing is held).
func checkColumns(ctx context.Context, cfg Config) doctor.Line {
	const subject = "search columns"
	url := "http://" + localAddr(cfg.HTTPAddr) + "/metrics"
	stats, err := scrapeColumns(ctx, url)
	if err != nil {
		return doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: "not checked: no cms run answers on " + url}
	}
	if len(stats) == 0 {
		return doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: "no search index open yet"}
	}
	var over, fine []string
	for _, s := range stats {
		if s.over {
			what := "all columns freed, answered by Bleve alone"
			if s.bytes > 0 {
				what = fmt.Sprintf("%s held, fields freed %s; searches reading them are answered by Bleve, the others by the columns",
					mib(s.bytes), strings.Join(s.freed, ", "))
			}
			over = append(over, fmt.Sprintf("%s (budget %s: %s)", s.index, mib(s.budget), what))
			continue
		}
		fine = append(fine, fmt.Sprintf("%s %s of %s", s.index, mib(s.bytes), mib(s.budget)))
	}
	if len(over) > 0 {
		return doctor.Line{Subject: subject, Verdict: doctor.Warn,
			Detail: "over budget, the least recently used fields' columns freed (a list answered by Bleve costs about its number of matches): " + strings.Join(over, "; "),
			Fix:    "raise memoryLimit (CMS_MEMORY_LIMIT) or searchColumnsMaxBytes (CMS_SEARCH_COLUMNS_MAX_BYTES); the WARN line \"search columns over budget\" gives the estimate"}
	}
	return doctor.Line{Subject: subject, Verdict: doctor.OK, Detail: "within budget: " + strings.Join(fine, ", ")}
}

type columnsState struct {
	index         string
	bytes, budget float64
	over          bool
	freed         []string // fields whose columns were freed
}

// scrapeColumns reads the cms_search_columns_* series of the metrics at
// url, by index in the order they come.
func scrapeColumns(ctx context.Context, url string) ([]columnsState, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var out []columnsState
	at := map[string]int{}
	for _, name := range []string{"cms_search_columns_bytes", "cms_search_columns_budget_bytes", "cms_search_columns_over_budget"} {
		f := fams[name]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			var index string
			for _, l := range m.GetLabel() {
				if l.GetName() == "index" {
					index = l.GetValue()
				}
			}
			i, seen := at[index]
			if !seen {
				i = len(out)
				at[index] = i
				out = append(out, columnsState{index: index})
			}
			v := m.GetGauge().GetValue()
			switch name {
			case "cms_search_columns_bytes":
				out[i].bytes = v
			case "cms_search_columns_budget_bytes":
				out[i].budget = v
			default:
				out[i].over = v == 1
			}
		}
	}
	if f := fams["cms_search_columns_freed"]; f != nil {
		for _, m := range f.GetMetric() {
			var index, field string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "index":
					index = l.GetValue()
				case "field":
					field = l.GetValue()
				}
			}
			if i, ok := at[index]; ok && m.GetGauge().GetValue() == 1 {
				out[i].freed = append(out[i].freed, field)
			}
		}
	}
	return out, nil
}

// localAddr is addr (":8080", "0.0.0.0:8080") as a client on this
// machine reaches it.
func localAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// mib formats b in MiB (KiB below one MiB).
func mib(b float64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}
