package simfleet

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// spanCounters are the collector's own pipeline counters, named as its
// Prometheus endpoint names them, with the component label that says which
// receiver or exporter counted.
var spanCounters = []struct {
	name, help string
	component  [][2]string // label name and value
	value      func(*traffic) float64
}{
	{"otelcol_receiver_accepted_spans_total", "Number of spans successfully pushed into the pipeline.",
		[][2]string{{"receiver", "otlp"}, {"transport", "grpc"}}, func(t *traffic) float64 { return t.accepted }},
	{"otelcol_receiver_refused_spans_total", "Number of spans that could not be pushed into the pipeline.",
		[][2]string{{"receiver", "otlp"}, {"transport", "grpc"}}, func(t *traffic) float64 { return t.refused }},
	{"otelcol_exporter_sent_spans_total", "Number of spans successfully sent to destination.",
		[][2]string{{"exporter", "otlp"}}, func(t *traffic) float64 { return t.sent }},
	{"otelcol_exporter_send_failed_spans_total", "Number of spans in failed attempts to send to destination.",
		[][2]string{{"exporter", "otlp"}}, func(t *traffic) float64 { return t.failed }},
}

// agentLabels are the labels of every series of an agent, from the attribute
// it reports: the collector's service_* labels and where it runs. A label
// whose attribute is empty or absent is left out (fleet without Fleet,
// region and zone without Zones).
var agentLabels = []struct{ label, attribute string }{
	{"service_instance_id", "service.instance.id"},
	{"service_name", "service.name"},
	{"service_version", "service.version"},
	{"fleet", "labels.fleet"},
	{"region", "cloud.region"},
	{"zone", "cloud.availability_zone"},
	{"host", "host.name"},
}

// fleetMetrics collects the counters of every agent on each scrape. It is an
// unchecked collector (Describe sends nothing): label names differ between
// agents, and between scrapes when an agent is relabelled.
type fleetMetrics struct {
	agents []*agent

	mu    sync.Mutex
	descs map[string]*prometheus.Desc // by metric name and label names
}

func (m *fleetMetrics) Describe(chan<- *prometheus.Desc) {}

func (m *fleetMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, a := range m.agents {
		names, values, t := a.sample()
		for _, c := range spanCounters {
			n, v := slices.Clip(names), slices.Clip(values) // appends copy: the agent's labels stay
			for _, l := range c.component {
				n, v = append(n, l[0]), append(v, l[1])
			}
			// Whole spans: rounding keeps the counter monotonic.
			ch <- prometheus.MustNewConstMetric(m.desc(c.name, c.help, n), prometheus.CounterValue, math.Round(c.value(&t)), v...)
		}
	}
}

// desc is the descriptor of a metric with these label names, made once.
func (m *fleetMetrics) desc(name, help string, labels []string) *prometheus.Desc {
	key := name + "\xff" + strings.Join(labels, "\xff")
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.descs[key]
	if d == nil {
		d = prometheus.NewDesc(name, help, labels, nil)
		m.descs[key] = d
	}
	return d
}

// sample brings the agent's counters up to the clock's now and returns them
// with its label names and values.
func (a *agent) sample() (names, values []string, t traffic) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.traffic.advance(a.cfg.Clock.Now())
	d := a.descriptionLocked()
	for _, l := range agentLabels {
		if v := attribute(d, l.attribute); v != "" {
			names, values = append(names, l.label), append(values, v)
		}
	}
	return names, values, a.traffic
}

// serveMetrics starts the fleet's Prometheus endpoint at /metrics, on ln or
// else on addr, with a registry of its own: only the simulated collectors'
// series, none of the process that runs them.
func (f *Fleet) serveMetrics(addr string, ln net.Listener) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(&fleetMetrics{agents: f.agents, descs: map[string]*prometheus.Desc{}}); err != nil {
		return fmt.Errorf("register fleet metrics: %w", err)
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("fleet metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	f.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: probeTimeout}
	f.metricsURL = "http://" + ln.Addr().String() + "/metrics"
	go func() { _ = f.metrics.Serve(ln) }() // ends with ErrServerClosed on stop
	return nil
}

// MetricsURL is the fleet's Prometheus endpoint, http://<address>/metrics,
// or "" without Config.MetricsAddr.
func (f *Fleet) MetricsURL() string { return f.metricsURL }
