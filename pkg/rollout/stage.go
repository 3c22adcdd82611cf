package rollout

import (
	"time"

	"github.com/myriarch/myriarch/pkg/gate"
)

// StageStatus of a stage of a topology rollout.
type StageStatus string

const (
	StagePending StageStatus = "pending"
	StageRunning StageStatus = "running" // its batches are being worked on
	StageBaking  StageStatus = "baking"  // every target is final; the bake runs until BakeUntil
	StagePassed  StageStatus = "passed"
	StageFailed  StageStatus = "failed"
	// StageFrozen: the stage has not started because a freeze of one of its
	// regions is active; it starts by itself when the freeze ends.
	StageFrozen StageStatus = "frozen"
	// PassCancelled is the outcome of a pass whose stage was ended from
	// outside (abort, supersede) before it finished, none of its targets
	// having failed.
	PassCancelled StageStatus = "cancelled"
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
	// Gate is the health gate of the current (or last) bake; nil without
	// health checks. LastRed is the last red gate of the stage, kept when a
	// new bake begins: "metric error-rate (eu-west-1/eu-west-1a): value 0.2 above 0.01".
	Gate    *gate.State `json:"gate,omitempty"`
	LastRed string      `json:"lastRed,omitempty"`
	// Held says which freeze holds a frozen stage and until when.
	Held string `json:"held,omitempty"`
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
	// Cleared counts the batches whose batch gate passed (wave batchBake):
	// batch b > 0 starts only when Cleared >= b.
	Cleared int `json:"cleared,omitempty"`
	// Gate is the batch gate after batch Gate.Batch.
	Gate *BatchGate `json:"gate,omitempty"`
	// Outcome is the pass's own outcome (StagePassed or StageFailed),
	// recorded when its stage first finished: failed when one of its
	// targets failed, whatever the stage's. The metric of finished passes
	// counts a pass when it gains its outcome, so a stage reopened by
	// stragglers that passes again is not counted twice; a retry of failed
	// waves clears it, since the pass runs again.
	Outcome StageStatus `json:"outcome,omitempty"`
}

// BatchGate is the gate read after one batch of a pass, on that batch's
// targets alone.
type BatchGate struct {
	Batch int `json:"batch"`
	gate.State
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

// EndPasses gives an outcome to each pass of a running or baking stage
// that the rollout leaves unfinished from outside (abort, supersede, a
// rollback that was asked for): failed when PassFailed, else cancelled, so
// that every pass that began is counted once. Stages are cloned first, so
// a caller's copy of the rollout is not changed.
func (r *Rollout) EndPasses(targets []Target, now time.Time) {
	r.Stages = append([]Stage(nil), r.Stages...)
	for s := range r.Stages {
		st := &r.Stages[s]
		if st.Status != StageRunning && st.Status != StageBaking {
			continue
		}
		st.Passes = append([]Pass(nil), st.Passes...)
		for i := range st.Passes {
			if st.Passes[i].Outcome != "" {
				continue
			}
			st.Passes[i].Outcome = PassCancelled
			if r.PassFailed(s, i, targets, now) {
				st.Passes[i].Outcome = StageFailed
			}
		}
	}
}

// PassFailed reports whether pass i of stage s failed: one of its targets
// failed, or at now the gate of its stage or its own batch gate is red
// (failuresToStop consecutive red readings, or a red last reading). A red
// stage gate fails every pass of the stage, since it reads them all.
func (r Rollout) PassFailed(s, i int, targets []Target, now time.Time) bool {
	fts := 1
	if h := r.Policy.Health; h != nil {
		fts = h.FailuresToStop
	}
	st := r.Stages[s]
	if st.Gate != nil && st.Gate.Verdict(fts, now) == gate.Failed {
		return true
	}
	if g := st.Passes[i].Gate; g != nil && g.Verdict(fts, now) == gate.Failed {
		return true
	}
	for _, t := range targets {
		if t.Stage == s && t.Pass == i && t.Status == TargetFailed {
			return true
		}
	}
	return false
}
