// Package gate holds the pure rules of a stage's health gate: what one
// reading's results mean (rules.go: template substitution, the verdict on a
// metric's value, the wording of firing alerts), which alerts concern a stage
// (matcher.go), and how the readings of a bake become a verdict (state.go).
// It does no I/O and imports no cloud SDK or metrics client, so that the
// engine and everything that links it stay free of them; the readers that
// query probes, Prometheus, CloudWatch and Alertmanager live in
// adapters/gate/gateread and call these rules.
package gate

import (
	"fmt"
	"strings"
)

// Kind of a check.
type Kind string

const (
	KindProbe  Kind = "probe"
	KindMetric Kind = "metric"
	KindAlert  Kind = "alert" // Alertmanager
	KindAlarm  Kind = "alarm" // CloudWatch alarms
)

// Result is the outcome of one check of one reading, for one pass (metrics),
// one host (probes) or the stage (alerts, alarms).
type Result struct {
	Kind  Kind   `json:"kind"`
	Name  string `json:"name"`            // metric name, probe URL template, "alertmanager", alarm name or prefix
	Scope string `json:"scope,omitempty"` // the pass's name ("rest/eu-west-1/eu-west-1a"), the probed host, or empty for the stage (alerts)
	Red   bool   `json:"red"`
	// Error says the check could not be read (provider unreachable, query
	// rejected): the result is red, and operators see an error, not a breach.
	Error  string   `json:"error,omitempty"`
	Value  *float64 `json:"value,omitempty"`
	Detail string   `json:"detail"` // "value 0.2 above 0.01", "no data", "status 503, want 200", "alert ExporterFailing firing"
	// DryRun results are recorded and shown but never stop the rollout.
	DryRun bool `json:"dryRun,omitempty"`
}

// String is the line operators see: metric error-rate (eu-west-1/eu-west-1a): value 0.2 above 0.01.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Kind, r.Name)
	if r.Scope != "" {
		fmt.Fprintf(&b, " (%s)", r.Scope)
	}
	b.WriteString(": ")
	if r.Error != "" {
		b.WriteString("error: " + r.Error)
	} else {
		b.WriteString(r.Detail)
	}
	if r.DryRun {
		b.WriteString(" [dry run]")
	}
	return b.String()
}

// Blocking reports whether the result stops the rollout: red and not a dry run.
func (r Result) Blocking() bool { return r.Red && !r.DryRun }

// Pass is a pass of the stage as the metric queries see it. Region and Zone
// are the pass's own for a split wave; for a pass that is not split they
// list the regions (zones) of its targets joined with "|", for a =~ matcher.
type Pass struct {
	Name   string
	Region string
	Zone   string
}

// Host is a target a probe reaches: the agent and its host attribute.
type Host struct {
	AgentID string
	Host    string
}

// Request is one reading of a gate.
type Request struct {
	Fleet string
	Wave  string
	Stage string
	// Passes the metric queries run for (one query per pass) and whose
	// regions and zones an alert must concern.
	Passes []Pass
	// Hosts the probes reach: every target of the stage, or of the batch.
	Hosts []Host
	// ProbesOnly is a batch gate: metrics and alerts stay with the stage gate.
	ProbesOnly bool
}
