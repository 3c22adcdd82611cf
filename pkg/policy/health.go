package policy

import "time"

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
// that starts with http://{host} or https://{host}.
type Probe struct {
	URL          string        `json:"url"`
	ExpectStatus int           `json:"expectStatus,omitempty"` // default 200
	Timeout      time.Duration `json:"timeout,omitempty"`      // default 5s
	DryRun       bool          `json:"dryRun,omitempty"`
}

// Metric is a query read once per pass of the stage; {fleet}, {region},
// {zone}, {wave} and {stage} are substituted. Red above Max, below Min, or
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
