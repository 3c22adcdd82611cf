package policy

import (
	"time"

	"github.com/myriarch/myriarch/core/windows"
)

// The gate fields: the evidence a stage must show during its bake before the
// next stage starts (docs/policy.md, "Gates").

// Defaults of the health gate and of approvals.
const (
	DefaultGateInterval      = 30 * time.Second
	DefaultFailuresToStop    = 1
	DefaultExpectStatus      = 200
	DefaultProbeTimeout      = 5 * time.Second
	DefaultMetricLookback    = 5 * time.Minute
	DefaultApprovalsRequired = 1
	DefaultApprovalExpiry    = 72 * time.Hour
	MinGateInterval          = time.Second
)

// Providers of a metric check.
const (
	ProviderPrometheus = "prometheus"
	ProviderCloudWatch = "cloudwatch"
)

// Health is the gate read after each stage (and, for probes, after each
// batch of a wave with batchBake). Without it a stage's gate is its bake.
type Health struct {
	Interval       time.Duration `json:"interval,omitempty"`       // between readings; default 30s
	FailuresToStop int           `json:"failuresToStop,omitempty"` // consecutive red readings that fail the stage; default 1
	Probes         []Probe       `json:"probes,omitempty"`
	Metrics        []Metric      `json:"metrics,omitempty"`
	Alerts         *Alerts       `json:"alerts,omitempty"`
}

// Probe is an HTTP request to every target of the stage. URL is a template
// that starts with http://{host} or https://{host}; {fleet}, {wave} and
// {stage} are substituted too (ProbePlaceholders).
type Probe struct {
	URL          string        `json:"url"`
	ExpectStatus int           `json:"expectStatus,omitempty"` // default 200
	Timeout      time.Duration `json:"timeout,omitempty"`      // default 5s
	DryRun       bool          `json:"dryRun,omitempty"`
}

// Metric is a query read once per pass of the stage; {fleet}, {region},
// {zone}, {wave} and {stage} are substituted (StagePlaceholders). Red above Max, below Min, or
// when the query returns no data.
type Metric struct {
	Name     string   `json:"name"`
	Provider string   `json:"provider,omitempty"` // prometheus (default) or cloudwatch
	Query    string   `json:"query,omitempty"`    // PromQL, or a CloudWatch metric-math expression
	Max      *float64 `json:"max,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	// CloudWatch is a single CloudWatch metric, instead of Query.
	CloudWatch *CloudWatchMetric `json:"cloudwatch,omitempty"`
	// Lookback is the CloudWatch window read (default 5m); PromQL says its own.
	Lookback time.Duration `json:"lookback,omitempty"`
	DryRun   bool          `json:"dryRun,omitempty"`
}

// CloudWatchMetric names one CloudWatch metric and its statistic.
type CloudWatchMetric struct {
	Namespace  string            `json:"namespace"`
	MetricName string            `json:"metricName"`
	Dimensions map[string]string `json:"dimensions,omitempty"` // values are templates
	Stat       string            `json:"stat,omitempty"`       // default Average
	Period     time.Duration     `json:"period,omitempty"`     // default 60s
}

// Alerts blocks a stage while an alert concerning it is active: in
// Alertmanager (every BlockOn condition matches) or a CloudWatch alarm in
// state ALARM.
type Alerts struct {
	BlockOn          []string         `json:"blockOn,omitempty"` // key=value, key!=value, key=~regex, key!~regex
	CloudWatchAlarms *CloudWatchAlarm `json:"cloudwatchAlarms,omitempty"`
	DryRun           bool             `json:"dryRun,omitempty"`
}

// CloudWatchAlarm selects alarms by name or name prefix (templates).
type CloudWatchAlarm struct {
	Names  []string `json:"names,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
}

// Approvals are the rules of every approval between waves.
type Approvals struct {
	Required int           `json:"required,omitempty"` // distinct approvers; default 1
	Expiry   time.Duration `json:"expiry,omitempty"`   // from the moment the wave waits; default 72h
}

// IsZero reports whether no check is configured: the gate is the bake alone.
func (h Health) IsZero() bool {
	return len(h.Probes) == 0 && len(h.Metrics) == 0 && h.Alerts == nil
}

// Freeze is a period in which no stage of the listed regions starts: an
// absolute one (From, Until) or a daily recurring one (Window, with an
// explicit time zone). A stage already running goes on; the next one waits.
type Freeze struct {
	Name    string          `json:"name"`
	Regions []string        `json:"regions,omitempty"` // empty: every region
	From    *time.Time      `json:"from,omitempty"`
	Until   *time.Time      `json:"until,omitempty"`
	Window  *windows.Window `json:"window,omitempty"`
}

// withDefaults is the gate as the snapshot keeps it; nil stays nil.
func (h *Health) withDefaults() *Health {
	if h == nil {
		return nil
	}
	out := *h
	out.Interval = orDefault(h.Interval, DefaultGateInterval)
	if out.FailuresToStop == 0 {
		out.FailuresToStop = DefaultFailuresToStop
	}
	out.Probes = append([]Probe(nil), h.Probes...)
	for i := range out.Probes {
		p := &out.Probes[i]
		if p.ExpectStatus == 0 {
			p.ExpectStatus = DefaultExpectStatus
		}
		p.Timeout = orDefault(p.Timeout, DefaultProbeTimeout)
	}
	out.Metrics = append([]Metric(nil), h.Metrics...)
	for i := range out.Metrics {
		m := &out.Metrics[i]
		if m.Provider == "" {
			m.Provider = ProviderPrometheus
		}
		if m.Provider == ProviderCloudWatch {
			m.Lookback = orDefault(m.Lookback, DefaultMetricLookback)
			if m.CloudWatch != nil {
				cw := *m.CloudWatch
				if cw.Stat == "" {
					cw.Stat = "Average"
				}
				cw.Period = orDefault(cw.Period, time.Minute)
				m.CloudWatch = &cw
			}
		}
	}
	return &out
}

func (a Approvals) withDefaults() Approvals {
	if a.Required == 0 {
		a.Required = DefaultApprovalsRequired
	}
	a.Expiry = orDefault(a.Expiry, DefaultApprovalExpiry)
	return a
}

// approveAfter turns approvalsBetween into requireApproval on the wave after
// each named one: "after canary" is "before the wave that follows canary".
// A name of the last wave has no wave after it here; the implicit rest wave,
// when there is one, reads it from the snapshot (ApprovalAfterLast).
func approveAfter(ws []Wave, names []string) {
	for i := 0; i+1 < len(ws); i++ {
		for _, n := range names {
			if ws[i].Name == n {
				ws[i+1].RequireApproval = true
			}
		}
	}
}

// ApprovalAfterLast reports whether approvalsBetween names the last wave of
// the snapshot: the implicit rest wave that follows it then needs approval.
func (s Snapshot) ApprovalAfterLast() bool {
	if len(s.Waves) == 0 {
		return false
	}
	for _, n := range s.ApprovalsBetween {
		if n == s.Waves[len(s.Waves)-1].Name {
			return true
		}
	}
	return false
}

// GateFailuresToStop is health.failuresToStop, the consecutive red
// readings that fail a gate; 1 without health checks (a batch gate that is
// only a wait).
func (s Snapshot) GateFailuresToStop() int {
	if s.Health == nil {
		return 1
	}
	return s.Health.FailuresToStop
}

// Staged reports whether the rollout runs in stages: a wave splits by
// region or zone, or a health gate or a freeze must be read between steps.
// A wave without by is then one stage with one pass.
func (s Snapshot) Staged() bool {
	if s.SplitsWaves() || s.Health != nil || len(s.Freezes) > 0 {
		return true
	}
	for _, w := range s.Waves {
		if w.Bake > 0 || w.BatchGate {
			return true
		}
	}
	return false
}
