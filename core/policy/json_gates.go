package policy

import (
	"encoding/json"
	"time"
)

// The gate types carry their durations as strings in JSON too, like the
// rest of the snapshot (json.go).

type healthFields Health
type healthJSON struct {
	healthFields
	Interval jsonDuration `json:"interval,omitempty"`
}

func (h Health) MarshalJSON() ([]byte, error) {
	return json.Marshal(healthJSON{healthFields(h), jsonDuration(h.Interval)})
}

func (h *Health) UnmarshalJSON(b []byte) error {
	var in healthJSON
	err := json.Unmarshal(b, &in)
	*h = Health(in.healthFields)
	h.Interval = time.Duration(in.Interval)
	return err
}

type probeFields Probe
type probeJSON struct {
	probeFields
	Timeout jsonDuration `json:"timeout,omitempty"`
}

func (p Probe) MarshalJSON() ([]byte, error) {
	return json.Marshal(probeJSON{probeFields(p), jsonDuration(p.Timeout)})
}

func (p *Probe) UnmarshalJSON(b []byte) error {
	var in probeJSON
	err := json.Unmarshal(b, &in)
	*p = Probe(in.probeFields)
	p.Timeout = time.Duration(in.Timeout)
	return err
}

type metricFields Metric
type metricJSON struct {
	metricFields
	Lookback jsonDuration `json:"lookback,omitempty"`
}

func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(metricJSON{metricFields(m), jsonDuration(m.Lookback)})
}

func (m *Metric) UnmarshalJSON(b []byte) error {
	var in metricJSON
	err := json.Unmarshal(b, &in)
	*m = Metric(in.metricFields)
	m.Lookback = time.Duration(in.Lookback)
	return err
}

type cloudWatchMetricFields CloudWatchMetric
type cloudWatchMetricJSON struct {
	cloudWatchMetricFields
	Period jsonDuration `json:"period,omitempty"`
}

func (c CloudWatchMetric) MarshalJSON() ([]byte, error) {
	return json.Marshal(cloudWatchMetricJSON{cloudWatchMetricFields(c), jsonDuration(c.Period)})
}

func (c *CloudWatchMetric) UnmarshalJSON(b []byte) error {
	var in cloudWatchMetricJSON
	err := json.Unmarshal(b, &in)
	*c = CloudWatchMetric(in.cloudWatchMetricFields)
	c.Period = time.Duration(in.Period)
	return err
}

type approvalsFields Approvals
type approvalsJSON struct {
	approvalsFields
	Expiry jsonDuration `json:"expiry,omitempty"`
}

func (a Approvals) MarshalJSON() ([]byte, error) {
	return json.Marshal(approvalsJSON{approvalsFields(a), jsonDuration(a.Expiry)})
}

func (a *Approvals) UnmarshalJSON(b []byte) error {
	var in approvalsJSON
	err := json.Unmarshal(b, &in)
	*a = Approvals(in.approvalsFields)
	a.Expiry = time.Duration(in.Expiry)
	return err
}
