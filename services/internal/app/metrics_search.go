package app

import (
	"github.com/prometheus/client_golang/prometheus"

	searchbleve "github.com/cmsplatform/cms/pkg/search/bleve"
)

// columnsCollector exports the column index of each embedded search
// index (pkg/search/bleve, columns.go) at scrape time.
type columnsCollector struct {
	e                   *searchbleve.Engine
	bytes, budget, over *prometheus.Desc
	freed               *prometheus.Desc
}

func registerColumnMetrics(reg prometheus.Registerer, e *searchbleve.Engine) {
	labels := []string{"index"}
	reg.MustRegister(columnsCollector{e: e,
		bytes: prometheus.NewDesc("cms_search_columns_bytes",
			"Estimated memory of the column index of an embedded search index (0 while it is off or not built yet).", labels, nil),
		budget: prometheus.NewDesc("cms_search_columns_budget_bytes",
			"The most memory the column index of an embedded search index may hold (searchColumnsMaxBytes, else a quarter of memoryLimit).", labels, nil),
		over: prometheus.NewDesc("cms_search_columns_over_budget",
			"1 when the column index of an embedded search index outgrew its budget: columns were freed, least recently used field first (cms_search_columns_freed), and the lists, sorts and occurrences needing them are answered by Bleve, at a cost that grows with the matches; all of them when cms_search_columns_bytes is 0.", labels, nil),
		freed: prometheus.NewDesc("cms_search_columns_freed",
			"1 for each field whose column an embedded search index freed for its budget: the searches reading that field are answered by Bleve until it fits again.", []string{"index", "field"}, nil),
	})
}

func (c columnsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.bytes
	ch <- c.budget
	ch <- c.over
	ch <- c.freed
}

func (c columnsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.e.ColumnStats() {
		over := 0.0
		if s.OverBudget {
			over = 1
		}
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(s.Bytes), s.Index)
		ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, float64(s.Budget), s.Index)
		ch <- prometheus.MustNewConstMetric(c.over, prometheus.GaugeValue, over, s.Index)
		for _, f := range s.Freed {
			ch <- prometheus.MustNewConstMetric(c.freed, prometheus.GaugeValue, 1, s.Index, f)
		}
	}
}
