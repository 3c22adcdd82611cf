package enginetask

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/pkg/rollout"
)

// A stage that passed or failed in a pass writes one embedded-metric-format
// record per pass, with the fleet, region, zone and outcome as dimensions;
// a stage that was already final writes nothing again.
func TestWritePassMetrics(t *testing.T) {
	pass := func(name, region, zone string) rollout.Pass {
		return rollout.Pass{Name: name, Region: region, Zone: zone}
	}
	before := rollout.Rollout{ID: "r1", Fleet: "edge", Stages: []rollout.Stage{
		{Name: "canary", Status: rollout.StagePassed, Passes: []rollout.Pass{pass("canary", "", "")}},
		{Name: "rest/eu-1a+us-1a", Status: rollout.StageRunning, Passes: []rollout.Pass{pass("rest/eu-1/eu-1a", "eu-1", "eu-1a"), pass("rest/us-1/us-1a", "us-1", "us-1a")}},
	}}
	after := cloneStages(before)
	after.Stages[1].Status = rollout.StageFailed
	var b strings.Builder
	writePassMetrics(&b, before, after, now)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("records %q, want one per pass of the stage that failed", b.String())
	}
	var rec struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Fleet, Region, Zone, Outcome string
		Finished                     int `json:"RolloutPassesFinished"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	d := rec.AWS.CloudWatchMetrics[0]
	if rec.AWS.Timestamp != now.UnixMilli() || d.Namespace != MetricNamespace || d.Metrics[0].Name != MetricPassFinished ||
		strings.Join(d.Dimensions[0], ",") != "Fleet,Region,Zone,Outcome" ||
		rec.Fleet != "edge" || rec.Region != "us-1" || rec.Zone != "us-1a" || rec.Outcome != "failed" || rec.Finished != 1 {
		t.Fatalf("record %s", lines[1])
	}
}

func cloneStages(r rollout.Rollout) rollout.Rollout {
	r.Stages = append([]rollout.Stage(nil), r.Stages...)
	return r
}
