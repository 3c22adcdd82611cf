package enginetask

import (
	"encoding/json"
	"io"
	"time"

	"github.com/myriarch/myriarch/pkg/rollout"
)

// Metric names and namespace of the rollout metrics in CloudWatch.
const (
	MetricNamespace    = "Myriarch"
	MetricPassFinished = "RolloutPassesFinished" // per fleet, region, zone and outcome (passed, failed)
)

// passFinished is one embedded-metric-format record: CloudWatch Logs turns
// the line into a metric datum, so a Lambda publishes metrics by logging,
// without a PutMetricData call or its IAM permission.
type passFinished struct {
	AWS      emfMeta `json:"_aws"`
	Fleet    string  `json:"Fleet"`
	Region   string  `json:"Region"`
	Zone     string  `json:"Zone"`
	Outcome  string  `json:"Outcome"`
	Rollout  string  `json:"Rollout"` // a property, not a dimension: searchable in Logs Insights
	Pass     string  `json:"Pass"`
	Finished int     `json:"RolloutPassesFinished"`
}

type emfMeta struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

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
			rec := passFinished{
				AWS: emfMeta{Timestamp: now.UnixMilli(), CloudWatchMetrics: []emfDirective{{Namespace: MetricNamespace,
					Dimensions: [][]string{{"Fleet", "Region", "Zone", "Outcome"}},
					Metrics:    []emfMetric{{Name: MetricPassFinished, Unit: "Count"}}}}},
				Fleet: after.Fleet, Region: orNone(p.Region), Zone: orNone(p.Zone), Outcome: string(st.Status),
				Rollout: after.ID, Pass: p.Name, Finished: 1,
			}
			line, _ := json.Marshal(rec)
			_, _ = w.Write(append(line, '\n'))
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
