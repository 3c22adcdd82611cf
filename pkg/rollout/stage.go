package rollout

import "time"

// StageStatus of a stage of a topology rollout.
type StageStatus string

const (
	StagePending StageStatus = "pending"
	StageRunning StageStatus = "running" // its batches are being worked on
	StageBaking  StageStatus = "baking"  // every target is final; the bake runs until BakeUntil
	StagePassed  StageStatus = "passed"
	StageFailed  StageStatus = "failed"
)

// Stage is one stage of a rollout whose policy splits waves by region or
// zone: passes run together, each batch after batch, and the stage is
// followed by its wave's bake. A rollout without such waves has no stages;
// its waves run as they always did.
type Stage struct {
	Name   string      `json:"name"`
	Wave   int         `json:"wave"`
	Passes []Pass      `json:"passes"`
	Status StageStatus `json:"status"`
	// BakeUntil is computed once, when the stage's last target became final
	// (its finishedAt + the wave's bake), and stored: a retried task, a
	// continued execution or a restarted engine never repeats elapsed bake
	// time.
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	BakeUntil  *time.Time `json:"bakeUntil,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// Pass is the work on one region or zone within a stage, in batches of
// BatchSize targets, one batch after the other. Targets name their pass and
// batch; the pass keeps only counts.
type Pass struct {
	Name      string `json:"name"`
	Region    string `json:"region,omitempty"`
	Zone      string `json:"zone,omitempty"`
	Size      int    `json:"size"`
	BatchSize int    `json:"batchSize"`
	Batches   int    `json:"batches"`
}

// StageProgress is "passed/total" stages, the summary lists show.
func (r Rollout) StageProgress() (passed, total int) {
	for _, s := range r.Stages {
		if s.Status == StagePassed {
			passed++
		}
	}
	return passed, len(r.Stages)
}
