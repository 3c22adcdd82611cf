package enginetask

import (
	"io"
	"time"

	"github.com/myriarch/myriarch/adapters/emf"
	"github.com/myriarch/myriarch/core/rollout"
)

// Metric names and namespace of the rollout metrics in CloudWatch.
const (
	MetricNamespace    = "Myriarch"
	MetricPassFinished = "RolloutPassesFinished" // per fleet, region, zone and outcome (passed, failed)
)

// WritePassMetrics writes one record per pass that gained its outcome
// between before and after (rollout.Pass.Outcome, recorded by the engine
// when the pass's stage first finished): the count of finished passes per
// fleet, region, zone and the pass's own outcome (failed only if one of its
// targets failed). A pass that had its outcome already, in a stage that
// stragglers reopened, is not counted again.
func WritePassMetrics(w io.Writer, before, after rollout.Rollout, now time.Time) {
	if w == nil {
		return
	}
	for i, st := range after.Stages {
		for j, p := range st.Passes {
			if p.Outcome == "" || (i < len(before.Stages) && j < len(before.Stages[i].Passes) && before.Stages[i].Passes[j].Outcome != "") {
				continue
			}
			rec := emf.Record{Namespace: MetricNamespace, Dimensions: []string{"Fleet", "Region", "Zone", "Outcome"},
				Metrics: []emf.Metric{{Name: MetricPassFinished, Unit: "Count"}},
				Values: map[string]any{"Fleet": after.Fleet, "Region": orNone(p.Region), "Zone": orNone(p.Zone), "Outcome": string(p.Outcome),
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
