package simfleet

import (
	"strings"
	"time"
)

// traffic is the span flow through one collector's traces pipeline (receiver
// otlp → exporter otlp) as the collector's own counters count it. Nothing
// ticks: the counters are brought up to date from the clock whenever they are
// read or the flow changes, so thousands of agents need no goroutine each and
// a fake clock moves them exactly. The agent's mu guards it.
type traffic struct {
	spansPerSecond float64
	process        time.Time // start of the collector process the counters belong to
	at             time.Time // the counters are up to date until here
	running        bool      // the pipeline takes spans
	failScenario   float64   // share of exports failed by FailExporters
	failConfig     float64   // share failed by the running configuration (Config.ExportFailure)

	accepted, refused, sent, failed float64
}

func newTraffic(spansPerSecond float64, h collectorHealth) traffic {
	return traffic{spansPerSecond: spansPerSecond, process: h.startTime, at: h.startTime, running: pipelineRuns(h.status)}
}

// failing is the share of spans the exporter fails: the larger of the causes.
func (t *traffic) failing() float64 { return max(t.failScenario, t.failConfig) }

// advance counts the spans from t.at to now under the flow as it was.
// Example: running at 100 spans/s, failing 0.25, for 10 s: accepted +1000,
// sent +750, send_failed +250. The exporter's queue never fills, so the
// receiver refuses nothing.
func (t *traffic) advance(now time.Time) {
	if !now.After(t.at) {
		return
	}
	if t.running {
		n, f := now.Sub(t.at).Seconds()*t.spansPerSecond, t.failing()
		t.accepted += n
		t.sent += n * (1 - f)
		t.failed += n * f
	}
	t.at = now
}

// follow takes the collector's new health at now. A new process counts from
// zero, as a restarted collector does (rate() takes resets in its stride).
func (t *traffic) follow(h collectorHealth, now time.Time) {
	t.advance(now)
	if !h.startTime.Equal(t.process) {
		t.process = h.startTime
		t.accepted, t.refused, t.sent, t.failed = 0, 0, 0, 0
	}
	t.running = pipelineRuns(h.status)
}

// pipelineRuns reports whether a collector in this status takes spans: once
// started (StatusOK), and still when a component reports a recoverable error.
func pipelineRuns(status string) bool {
	return status == StatusOK || status == StatusRecoverableError
}

// inZone reports whether an agent in region and zone is one that where
// selects: "<region>/<zone>" one zone, "<region>" all zones of a region, ""
// every agent.
func inZone(where, region, zone string) bool {
	if where == "" {
		return true
	}
	r, z, oneZone := strings.Cut(where, "/")
	return r == region && (!oneZone || z == zone)
}
