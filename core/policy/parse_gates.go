package policy

import (
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// The decoders of the gate fields: health, approvals, approvalsBetween and
// freezes. Their rules beyond the types are in validate_gates.go.

func (d *decoder) gateFields(s *Spec) fields {
	return fields{
		"health": func(v *yaml.Node, path string) { s.Health = d.health(v, path) },
		"approvalsBetween": func(v *yaml.Node, path string) {
			s.ApprovalsBetween = []string{}
			d.list(v, path, "write e.g. approvalsBetween: [canary]", func(item *yaml.Node, p string) {
				n, _ := d.str(item, p)
				s.ApprovalsBetween = append(s.ApprovalsBetween, n)
			})
		},
		"approvals": func(v *yaml.Node, path string) {
			d.object(v, path, "", fields{
				"required": func(v *yaml.Node, path string) { s.Approvals.Required = d.positive(v, path) },
				"expiry":   func(v *yaml.Node, path string) { s.Approvals.Expiry, _ = d.duration(v, path) },
			})
		},
		"freezes": func(v *yaml.Node, path string) {
			s.Freezes = []Freeze{}
			d.list(v, path, "", func(item *yaml.Node, p string) { s.Freezes = append(s.Freezes, d.freeze(item, p)) })
		},
	}
}

// positive reads an integer that, when written, must be at least 1: in Spec
// 0 means "not set".
func (d *decoder) positive(n *yaml.Node, path string) int {
	v, ok := d.integer(n, path)
	if ok && v < 1 {
		d.issues.Errorf(CodeValueInvalid, path, "%s must be 1 or more, got %d", lastKey(path), v)
		return 0
	}
	return v
}

func (d *decoder) health(n *yaml.Node, path string) *Health {
	h := &Health{}
	d.object(n, path, "", fields{
		"interval":       func(v *yaml.Node, path string) { h.Interval, _ = d.duration(v, path) },
		"failuresToStop": func(v *yaml.Node, path string) { h.FailuresToStop = d.positive(v, path) },
		"probes": func(v *yaml.Node, path string) {
			d.list(v, path, "", func(item *yaml.Node, p string) { h.Probes = append(h.Probes, d.probe(item, p)) })
		},
		"metrics": func(v *yaml.Node, path string) {
			d.list(v, path, "", func(item *yaml.Node, p string) { h.Metrics = append(h.Metrics, d.metric(item, p)) })
		},
		"alerts": func(v *yaml.Node, path string) { h.Alerts = d.alerts(v, path) },
	})
	return h
}

func (d *decoder) probe(n *yaml.Node, path string) Probe {
	var p Probe
	d.object(n, path, "", fields{
		"url":          func(v *yaml.Node, path string) { p.URL, _ = d.str(v, path) },
		"expectStatus": func(v *yaml.Node, path string) { p.ExpectStatus, _ = d.integer(v, path) },
		"timeout":      func(v *yaml.Node, path string) { p.Timeout, _ = d.duration(v, path) },
		"dryRun":       func(v *yaml.Node, path string) { p.DryRun, _ = d.boolean(v, path) },
	})
	return p
}

func (d *decoder) metric(n *yaml.Node, path string) Metric {
	var m Metric
	d.object(n, path, "", fields{
		"name":     func(v *yaml.Node, path string) { m.Name, _ = d.str(v, path) },
		"provider": func(v *yaml.Node, path string) { m.Provider, _ = d.str(v, path) },
		"query":    func(v *yaml.Node, path string) { m.Query, _ = d.str(v, path) },
		"max":      func(v *yaml.Node, path string) { m.Max = d.number(v, path) },
		"min":      func(v *yaml.Node, path string) { m.Min = d.number(v, path) },
		"lookback": func(v *yaml.Node, path string) { m.Lookback, _ = d.duration(v, path) },
		"dryRun":   func(v *yaml.Node, path string) { m.DryRun, _ = d.boolean(v, path) },
		"cloudwatch": func(v *yaml.Node, path string) {
			cw := &CloudWatchMetric{}
			d.object(v, path, "", fields{
				"namespace":  func(v *yaml.Node, path string) { cw.Namespace, _ = d.str(v, path) },
				"metricName": func(v *yaml.Node, path string) { cw.MetricName, _ = d.str(v, path) },
				"dimensions": func(v *yaml.Node, path string) { cw.Dimensions = d.attributes(v, path) },
				"stat":       func(v *yaml.Node, path string) { cw.Stat, _ = d.str(v, path) },
				"period":     func(v *yaml.Node, path string) { cw.Period, _ = d.duration(v, path) },
			})
			m.CloudWatch = cw
		},
	})
	return m
}

// number reads a threshold: an integer or a decimal number.
func (d *decoder) number(n *yaml.Node, path string) *float64 {
	if n = d.scalar(n, path, "a number", ""); n == nil {
		return nil
	}
	if tag := n.ShortTag(); tag != "!!int" && tag != "!!float" {
		d.typeError(path, "a number", n, "write e.g. 0.01")
		return nil
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		d.typeError(path, "a number", n, "write e.g. 0.01")
		return nil
	}
	return &v
}

func (d *decoder) alerts(n *yaml.Node, path string) *Alerts {
	a := &Alerts{}
	d.object(n, path, "", fields{
		"blockOn": func(v *yaml.Node, path string) {
			a.BlockOn = []string{}
			d.list(v, path, `write e.g. blockOn: ["severity=critical"]`, func(item *yaml.Node, p string) {
				s, _ := d.str(item, p)
				a.BlockOn = append(a.BlockOn, s)
			})
		},
		"cloudwatchAlarms": func(v *yaml.Node, path string) {
			cw := &CloudWatchAlarm{}
			d.object(v, path, "", fields{
				"names": func(v *yaml.Node, path string) {
					d.list(v, path, "", func(item *yaml.Node, p string) {
						s, _ := d.str(item, p)
						cw.Names = append(cw.Names, s)
					})
				},
				"prefix": func(v *yaml.Node, path string) { cw.Prefix, _ = d.str(v, path) },
			})
			a.CloudWatchAlarms = cw
		},
		"dryRun": func(v *yaml.Node, path string) { a.DryRun, _ = d.boolean(v, path) },
	})
	return a
}

// freeze reads one freeze: from and until as RFC 3339 times, or a daily
// window (days, start, end, timezone) as in maintenanceWindows.
func (d *decoder) freeze(n *yaml.Node, path string) Freeze {
	var f Freeze
	var w windowFields
	d.object(n, path, "", fields{
		"name": func(v *yaml.Node, path string) { f.Name, _ = d.str(v, path) },
		"regions": func(v *yaml.Node, path string) {
			f.Regions = []string{}
			d.list(v, path, "write e.g. regions: [us-east-1]", func(item *yaml.Node, p string) {
				r, _ := d.str(item, p)
				f.Regions = append(f.Regions, r)
			})
		},
		"from":     func(v *yaml.Node, path string) { f.From = d.instant(v, path) },
		"until":    func(v *yaml.Node, path string) { f.Until = d.instant(v, path) },
		"days":     func(v *yaml.Node, path string) { w.days = v },
		"start":    func(v *yaml.Node, path string) { w.start = v },
		"end":      func(v *yaml.Node, path string) { w.end = v },
		"timezone": func(v *yaml.Node, path string) { w.timezone = v },
	})
	if w.set() {
		win := d.window(w.node(), path)
		f.Window = &win
	}
	return f
}

// windowFields collects the keys of a recurring freeze, which window reads.
type windowFields struct{ days, start, end, timezone *yaml.Node }

func (w windowFields) set() bool {
	return w.days != nil || w.start != nil || w.end != nil || w.timezone != nil
}

// node rebuilds the mapping of the window keys alone.
func (w windowFields) node() *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, kv := range []struct {
		key string
		v   *yaml.Node
	}{{"days", w.days}, {"start", w.start}, {"end", w.end}, {"timezone", w.timezone}} {
		if kv.v != nil {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv.key}, kv.v)
		}
	}
	return m
}

// instant reads an RFC 3339 time such as "2026-12-20T00:00:00Z".
func (d *decoder) instant(n *yaml.Node, path string) *time.Time {
	const example = `write an RFC 3339 time such as "2026-12-20T00:00:00Z"`
	if n = d.scalar(n, path, "a time", example); n == nil {
		return nil
	}
	t, err := time.Parse(time.RFC3339, n.Value)
	if err != nil {
		d.issues.Errorf(CodeFreezeInvalid, path, "invalid time %s; %s", quote(n.Value), example)
		return nil
	}
	return &t
}

func lastKey(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}
