package enginetask

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/rollout"
)

// A pass that gained its outcome writes one embedded-metric-format record,
// with the fleet, region, zone and the pass's own outcome as dimensions: in
// a failed stage, the pass without a failed target counts as passed. A pass
// that had its outcome already writes nothing again, also when its stage,
// reopened by stragglers, passes again.
func TestWritePassMetrics(t *testing.T) {
	pass := func(name, region, zone string, outcome rollout.StageStatus) rollout.Pass {
		return rollout.Pass{Name: name, Region: region, Zone: zone, Outcome: outcome}
	}
	before := rollout.Rollout{ID: "r1", Fleet: "edge", Stages: []rollout.Stage{
		{Name: "canary", Status: rollout.StagePassed, Passes: []rollout.Pass{pass("canary", "", "", rollout.StagePassed)}},
		{Name: "rest/eu-1a+us-1a", Status: rollout.StageRunning, Passes: []rollout.Pass{pass("rest/eu-1/eu-1a", "eu-1", "eu-1a", ""), pass("rest/us-1/us-1a", "us-1", "us-1a", "")}},
	}}
	after := cloneStages(before)
	after.Stages[1].Status = rollout.StageFailed
	after.Stages[1].Passes = []rollout.Pass{pass("rest/eu-1/eu-1a", "eu-1", "eu-1a", rollout.StagePassed), pass("rest/us-1/us-1a", "us-1", "us-1a", rollout.StageFailed)}
	var b strings.Builder
	WritePassMetrics(&b, before, after, now)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("records %q, want one per pass of the stage that failed", b.String())
	}
	type record struct {
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
	var eu, us record
	if err := json.Unmarshal([]byte(lines[0]), &eu); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &us); err != nil {
		t.Fatal(err)
	}
	d := us.AWS.CloudWatchMetrics[0]
	if us.AWS.Timestamp != now.UnixMilli() || d.Namespace != MetricNamespace || d.Metrics[0].Name != MetricPassFinished ||
		strings.Join(d.Dimensions[0], ",") != "Fleet,Region,Zone,Outcome" ||
		us.Fleet != "edge" || us.Region != "us-1" || us.Zone != "us-1a" || us.Outcome != "failed" || us.Finished != 1 {
		t.Fatalf("record %s", lines[1])
	}
	if eu.Zone != "eu-1a" || eu.Outcome != "passed" {
		t.Fatalf("record %s, want eu-1a passed: the pass's own outcome, not its stage's", lines[0])
	}

	// Stragglers reopened the last stage; it passes again, its passes keep
	// the outcome they had.
	reopened := cloneStages(after)
	reopened.Stages[1].Status = rollout.StageRunning
	passedAgain := cloneStages(reopened)
	passedAgain.Stages[1].Status = rollout.StagePassed
	b.Reset()
	WritePassMetrics(&b, reopened, passedAgain, now)
	if b.Len() != 0 {
		t.Fatalf("records %q for a stage that passed again, want none", b.String())
	}
}

func cloneStages(r rollout.Rollout) rollout.Rollout {
	r.Stages = append([]rollout.Stage(nil), r.Stages...)
	return r
}
