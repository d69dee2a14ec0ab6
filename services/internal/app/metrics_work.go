package app

import (
	"context"
	"time"

	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/webhooks"
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of the background work and of the components: jobs,
// webhook deliveries, and whether each component answers. Like the
// pipeline's, each reads its source at scrape time.

// registerJobMetrics exports the job runner's counters and the queue's
// depth (read from the job queue within timeout at each scrape; -1 when
// it does not answer).
func registerJobMetrics(reg prometheus.Registerer, r *jobs.Runner, timeout time.Duration) {
	finished := func(state string, f func(jobs.RunnerStats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_jobs_finished_total", "Jobs this process's runner finished, by final state (succeeded, failed: errors and kills).",
			prometheus.Labels{"state": state}, func() int64 { return f(r.Stats()) })
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_jobs_running", Help: "Jobs this process's runner is running now."},
			func() float64 { return float64(r.Stats().Running) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_jobs_pending",
			Help: "Jobs in the job queue not finished yet (queued or running, in every process); -1 when the queue did not answer."},
			func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout(timeout))
				defer cancel()
				n, err := r.Pending(ctx)
				if err != nil {
					return -1
				}
				return float64(n)
			}),
		finished("succeeded", func(s jobs.RunnerStats) int64 { return s.Succeeded }),
		finished("failed", func(s jobs.RunnerStats) int64 { return s.Failed }))
}

// registerWebhookMetrics exports the dispatcher's delivery attempts by
// outcome, the values of the attempt log's outcome field.
func registerWebhookMetrics(reg prometheus.Registerer, d *webhooks.Dispatcher) {
	attempts := func(outcome string, f func(webhooks.Stats) int64) prometheus.Collector {
		return labeledCounterFunc("cms_webhook_attempts_total",
			"Webhook delivery attempts of this process, by outcome: accepted (2xx), failed (retried), gave-up (the last failed attempt), refused-address.",
			prometheus.Labels{"outcome": outcome}, func() int64 { return f(d.Stats()) })
	}
	reg.MustRegister(
		attempts("accepted", func(s webhooks.Stats) int64 { return s.Accepted }),
		attempts("failed", func(s webhooks.Stats) int64 { return s.Failed }),
		attempts("gave-up", func(s webhooks.Stats) int64 { return s.GaveUp }),
		attempts("refused-address", func(s webhooks.Stats) int64 { return s.RefusedAddress }))
}

// componentCollector exports cms_component_up: 1 for each open component
// that answers its ping within the timeout at scrape time, else 0.
type componentCollector struct {
	comps   *Components
	timeout time.Duration
	desc    *prometheus.Desc
}

func registerComponentMetrics(reg prometheus.Registerer, comps *Components, timeout time.Duration) {
	reg.MustRegister(componentCollector{comps: comps, timeout: scrapeTimeout(timeout), desc: prometheus.NewDesc("cms_component_up",
		"Whether a component this process uses answered its ping at this scrape (1) or not (0), by component.",
		[]string{"component"}, nil)})
}

func (c componentCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c componentCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	answers, n := c.comps.pingParallel(ctx, func(string) bool { return true })
	for range n {
		a := <-answers
		up := 1.0
		if a.err != nil {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, up, a.name)
	}
}

// scrapeTimeout bounds a component call made at scrape time: the
// readiness timeout, at most 2 s (a scrape must not hang on a component).
func scrapeTimeout(ready time.Duration) time.Duration {
	if ready <= 0 || ready > 2*time.Second {
		return 2 * time.Second
	}
	return ready
}
