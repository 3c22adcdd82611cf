package engine

import (
	"time"

	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/waves"
)

// Candidate is a relevant agent of a new rollout, with the hash or version
// it starts from.
type Candidate struct {
	AgentID    string
	Attributes selector.Attributes
	FromRef    string
}

// NewRollout is what the planner decided to create.
type NewRollout struct {
	ID            string
	Fleet         string
	Kind          policy.Kind
	Policy        policy.Snapshot
	ToRef         string
	Origin        rollout.Origin
	CreatedBy     string
	RequestReason string
	Annotations   map[string]string
	Candidates    []Candidate
	Now           time.Time
}

// Create builds a pending rollout and distributes its targets over the waves
// of the policy snapshot (a snapshot too: later edits change neither).
func Create(n NewRollout) (rollout.Rollout, []rollout.Target) {
	cands := make([]waves.Candidate, len(n.Candidates))
	from := make(map[string]string, len(n.Candidates))
	for i, c := range n.Candidates {
		cands[i] = waves.Candidate{AgentID: c.AgentID, Attributes: c.Attributes}
		from[c.AgentID] = c.FromRef
	}
	plan := waves.Assign(n.ID, n.Policy.Waves, cands)
	r := rollout.Rollout{
		ID: n.ID, Fleet: n.Fleet, Kind: n.Kind, Status: rollout.Pending, Policy: n.Policy,
		ToRef: n.ToRef, Origin: n.Origin, CreatedBy: n.CreatedBy, RequestReason: n.RequestReason,
		Annotations: n.Annotations, CreatedAt: n.Now, Waves: plan.Waves,
	}
	return r, plan.Targets(n.ID, func(id string) string { return from[id] }, n.ToRef)
}

// AddStragglers adds agents that became relevant after the rollout was
// created to its last wave. A last wave that was skipped for want of targets
// or had completed runs again.
func AddStragglers(r rollout.Rollout, cands []Candidate) (rollout.Rollout, []rollout.Target) {
	if len(cands) == 0 || len(r.Waves) == 0 {
		return r, nil
	}
	r = cloneRollout(r)
	last := waves.LastWave(r.Waves)
	if w := &r.Waves[last]; w.Status == rollout.WaveSkipped || w.Status == rollout.WaveCompleted {
		w.Status, w.FinishedAt = rollout.WavePending, nil
		if w.StartedAt != nil {
			w.Status = rollout.WaveRunning
		}
	}
	out := make([]rollout.Target, len(cands))
	for i, c := range cands {
		out[i] = rollout.Target{RolloutID: r.ID, AgentID: c.AgentID, Wave: last, Status: rollout.TargetPending,
			Attempt: waves.FirstAttempt, FromRef: c.FromRef, ToRef: r.ToRef}
	}
	return r, out
}
