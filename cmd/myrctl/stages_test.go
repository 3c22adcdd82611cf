package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/api/schema"
	"github.com/myriarch/myriarch/pkg/client"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// watch shows the stages of a rollout whose waves split by zone: the
// progress, the batches done and the countdown of a bake.
func TestWriteStages_ProgressBatchesAndBakeCountdown(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	bake := now.Add(7*time.Minute + 30*time.Second)
	one, two := 1, 2
	r := client.Rollout{ID: "r-1", Progress: "1/3", Stages: []schema.Stage{
		{Name: "canary", Status: rollout.StagePassed, Passes: []schema.StagePass{{Name: "canary", Targets: 1, BatchSize: 1, Batches: 1, BatchesDone: &one}}},
		{Name: "rest/eu-1a", Status: rollout.StageBaking, BakeUntil: &bake, Passes: []schema.StagePass{{Name: "rest/eu-1/eu-1a", Targets: 4, BatchSize: 2, Batches: 2, BatchesDone: &two}}},
		{Name: "rest/eu-1b", Status: rollout.StagePending, Passes: []schema.StagePass{{Name: "rest/eu-1/eu-1b", Targets: 4, BatchSize: 2, Batches: 2}}},
	}}
	var b strings.Builder
	view{r: r, now: now}.writeStages(&b)
	out := b.String()
	for _, want := range []string{"Stages 1/3", "rest/eu-1a", "baking", "batches 2/2", "bake ends in 7m30s", "rest/eu-1b", "batches 0/2"} {
		if !strings.Contains(out, want) {
			t.Errorf("stages lack %q:\n%s", want, out)
		}
	}
}
