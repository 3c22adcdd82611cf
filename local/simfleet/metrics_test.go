package simfleet

import (
	"maps"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	accepted = "otelcol_receiver_accepted_spans_total"
	refused  = "otelcol_receiver_refused_spans_total"
	sent     = "otelcol_exporter_sent_spans_total"
	sendFail = "otelcol_exporter_send_failed_spans_total"
)

// scrape is one scrape of the fleet's /metrics, as Prometheus parses it.
type scrape map[string]*dto.MetricFamily

func scrapeFleet(t *testing.T, f *Fleet) scrape {
	t.Helper()
	resp, err := http.Get(f.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", f.MetricsURL(), resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// labels of the series of metric name for host (sim-01 …); nil if absent.
func (s scrape) labels(name, host string) map[string]string {
	for _, m := range s[name].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["host"] == host {
			return l
		}
	}
	return nil
}

// value of the counter name for host; -1 if absent.
func (s scrape) value(name, host string) float64 {
	for _, m := range s[name].GetMetric() {
		for _, p := range m.GetLabel() {
			if p.GetName() == "host" && p.GetValue() == host {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// spans is "accepted/sent/failed" of host, for one comparison per agent.
type spans struct{ accepted, sent, failed float64 }

func (s scrape) spans(host string) spans {
	return spans{s.value(accepted, host), s.value(sent, host), s.value(sendFail, host)}
}

func withMetrics(c *Config) { c.MetricsAddr = "127.0.0.1:0" }

func TestMetrics_SeriesAndLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   map[string]string // labels of agent 1's series besides the component and service_*
	}{
		{name: "zones and fleet", change: func(c *Config) { c.Zones = []string{"eu-west-1/eu-west-1a", "us-east-1/us-east-1b"} },
			want: map[string]string{"fleet": "edge", "region": "eu-west-1", "zone": "eu-west-1a", "host": "sim-01"}},
		{name: "neither", change: func(c *Config) { c.Fleet = "" }, want: map[string]string{"host": "sim-01"}}, // unknown labels are left out, not empty
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, 2, func(c *Config) { withMetrics(c); tc.change(c) })
			got := scrapeFleet(t, h.fleet)
			base := map[string]string{"service_instance_id": h.uid(1).String(), "service_name": "otelcol-contrib", "service_version": "0.161.0"}
			maps.Copy(base, tc.want)
			for name, component := range map[string]map[string]string{
				accepted: {"receiver": "otlp", "transport": "grpc"},
				refused:  {"receiver": "otlp", "transport": "grpc"},
				sent:     {"exporter": "otlp"},
				sendFail: {"exporter": "otlp"},
			} {
				if f := got[name]; f.GetType() != dto.MetricType_COUNTER || len(f.GetMetric()) != 2 {
					t.Errorf("%s: type %v with %d series, want a counter per agent", name, f.GetType(), len(f.GetMetric()))
				}
				want := maps.Clone(base)
				maps.Copy(want, component)
				if l := got.labels(name, "sim-01"); !maps.Equal(l, want) {
					t.Errorf("%s labels\n got %v\nwant %v", name, l, want)
				}
				if v := got.value(name, "sim-02"); v != 0 {
					t.Errorf("%s of sim-02 is %v before the clock moved", name, v)
				}
			}
		})
	}
}

// The labels are the attributes the agent reports now: a relabelled agent's
// series carry the new fleet.
func TestMetrics_LabelsFollowTheAttributes(t *testing.T) {
	h := start(t, 1, withMetrics)
	if err := h.fleet.SetAttributes(1, map[string]string{"labels.fleet": "lab"}); err != nil {
		t.Fatal(err)
	}
	if l := scrapeFleet(t, h.fleet).labels(sent, "sim-01"); l["fleet"] != "lab" {
		t.Errorf("labels after the move to fleet lab: %v", l)
	}
}

// The counters advance with the clock at SpansPerSecond: rate() over any
// window reads it back.
func TestMetrics_CountersFollowTheClock(t *testing.T) {
	h := start(t, 2, func(c *Config) { withMetrics(c); c.SpansPerSecond = 10 })
	h.clock.move(90 * time.Second)
	first := scrapeFleet(t, h.fleet)
	h.clock.move(10 * time.Second)
	second := scrapeFleet(t, h.fleet)
	for _, host := range []string{"sim-01", "sim-02"} {
		if got, want := first.spans(host), (spans{900, 900, 0}); got != want {
			t.Errorf("%s after 90 s: %+v, want %+v", host, got, want)
		}
		if got, want := second.spans(host), (spans{1000, 1000, 0}); got != want {
			t.Errorf("%s after 100 s: %+v, want %+v", host, got, want)
		}
		if v := second.value(refused, host); v != 0 {
			t.Errorf("%s refused %v spans", host, v)
		}
	}
}

func TestMetrics_OffByDefault(t *testing.T) {
	h := start(t, 1, nil)
	if u := h.fleet.MetricsURL(); u != "" {
		t.Errorf("metrics URL %q without MetricsAddr", u)
	}
}

func TestMetrics_ClosedByStop(t *testing.T) {
	h := start(t, 1, withMetrics)
	if err := h.fleet.Stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(h.fleet.MetricsURL()); err == nil {
		resp.Body.Close()
		t.Error("the metrics endpoint answers after Stop")
	}
}

// A listener the caller opened is served as it is, and closed by Stop.
func TestMetrics_OnTheCallersListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, 1, func(c *Config) { c.MetricsListener = ln })
	if want := "http://" + ln.Addr().String() + "/metrics"; h.fleet.MetricsURL() != want {
		t.Fatalf("metrics URL %q, want %q", h.fleet.MetricsURL(), want)
	}
	if got := scrapeFleet(t, h.fleet); got[sent] == nil {
		t.Fatalf("no %s series on the caller's listener: %v", sent, got)
	}
	if err := h.fleet.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("the caller's listener still accepts after Stop")
	}
}

func TestStart_RefusesBadMetricsAddr(t *testing.T) {
	cfg := DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Clock, cfg.MetricsAddr = 1, newTestServer(t, true).url, newFakeClock(), "127.0.0.1:-1"
	if f, err := Start(t.Context(), cfg); err == nil {
		_ = f.Stop()
		t.Error("Start accepted a metrics address it cannot listen on")
	}
}
