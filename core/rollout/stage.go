package rollout

import (
	"time"

	"github.com/myriarch/myriarch/core/gate"
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
// rollback that was asked for): failed or cancelled (SettlePasses), so that
// every pass that began is counted once. Stages are cloned first, so a
// caller's copy of the rollout is not changed.
func (r *Rollout) EndPasses(targets []Target, now time.Time) {
	r.Stages = append([]Stage(nil), r.Stages...)
	for s := range r.Stages {
		if st := &r.Stages[s]; st.Status == StageRunning || st.Status == StageBaking {
			st.Passes = append([]Pass(nil), st.Passes...)
			r.SettlePasses(s, PassCancelled, targets, now)
		}
	}
}

// SettlePasses gives each pass of stage s that has no outcome yet its own:
// failed when one of its targets failed, or at now the gate of its stage or
// its own batch gate is red (failuresToStop consecutive red readings, or a
// red last reading: a red stage gate fails every pass of the stage, since
// it reads them all); otherwise, else. Passes that have an outcome keep it.
// It changes r.Stages[s].Passes in place.
func (r *Rollout) SettlePasses(s int, otherwise StageStatus, targets []Target, now time.Time) {
	st := &r.Stages[s]
	fts := r.Policy.GateFailuresToStop()
	failed := make([]bool, len(st.Passes))
	for _, t := range targets {
		if t.Stage == s && t.Pass < len(failed) && t.Status == TargetFailed {
			failed[t.Pass] = true
		}
	}
	stageRed := st.Gate != nil && st.Gate.Verdict(fts, now) == gate.Failed
	for i := range st.Passes {
		ps := &st.Passes[i]
		if ps.Outcome != "" {
			continue
		}
		ps.Outcome = otherwise
		if stageRed || failed[i] || (ps.Gate != nil && ps.Gate.Verdict(fts, now) == gate.Failed) {
			ps.Outcome = StageFailed
		}
	}
}
