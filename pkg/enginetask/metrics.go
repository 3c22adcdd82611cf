package enginetask

import (
	"io"
	"time"

	"github.com/myriarch/myriarch/pkg/emf"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// Metric names and namespace of the rollout metrics in CloudWatch.
const (
	MetricNamespace    = "Myriarch"
	MetricPassFinished = "RolloutPassesFinished" // per fleet, region, zone and outcome (passed, failed)
)

// writePassMetrics writes one record per pass of every stage that a pass
// finished (passed or failed) between before and after: the count of
// finished passes per fleet, region, zone and outcome.
func writePassMetrics(w io.Writer, before, after rollout.Rollout, now time.Time) {
	if w == nil {
		return
	}
	for i, st := range after.Stages {
		if st.Status != rollout.StagePassed && st.Status != rollout.StageFailed {
			continue
		}
		if i < len(before.Stages) && before.Stages[i].Status == st.Status {
			continue
		}
		for _, p := range st.Passes {
			rec := emf.Record{Namespace: MetricNamespace, Dimensions: []string{"Fleet", "Region", "Zone", "Outcome"},
				Metrics: []emf.Metric{{Name: MetricPassFinished, Unit: "Count"}},
				Values: map[string]any{"Fleet": after.Fleet, "Region": orNone(p.Region), "Zone": orNone(p.Zone), "Outcome": string(st.Status),
					// Rollout and Pass are properties, not dimensions: searchable in Logs Insights.
					"Rollout": after.ID, "Pass": p.Name, MetricPassFinished: 1}}
			_ = rec.Write(w, now)
		}
	}
}

// orNone: a dimension value may not be empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
