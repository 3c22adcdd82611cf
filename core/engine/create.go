package engine

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/topology"
	"github.com/myriarch/myriarch/core/waves"
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
// of the policy snapshot (a snapshot too: later edits change neither). When
// the policy splits waves by region or zone, the targets are placed in the
// stages, passes and batches of core/topology; agents of such a wave that
// lack the region or zone attribute are an error: the rollout is not
// created rather than created without them.
func Create(n NewRollout) (rollout.Rollout, []rollout.Target, error) {
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
	if last := &r.Waves[len(r.Waves)-1]; last.Implicit && n.Policy.ApprovalAfterLast() {
		last.RequireApproval = true
	}
	ts := plan.Targets(n.ID, func(id string) string { return from[id] }, n.ToRef)
	if !n.Policy.Staged() {
		return r, ts, nil
	}
	attrs := make(map[string]selector.Attributes, len(n.Candidates))
	for _, c := range n.Candidates {
		attrs[c.AgentID] = c.Attributes
	}
	in := make([]topology.Target, len(ts))
	for i, t := range ts {
		in[i] = topology.Target{AgentID: t.AgentID, Wave: t.Wave, Attributes: attrs[t.AgentID]}
	}
	layout, places, err := topology.Compute(n.ID, n.Policy, in)
	if err != nil {
		return rollout.Rollout{}, nil, fmt.Errorf("rollout %s: %w", n.ID, err)
	}
	r.Stages = stagesOf(layout)
	for i := range ts {
		ts[i].Stage, ts[i].Pass, ts[i].Batch = places[i].Stage, places[i].Pass, places[i].Batch
	}
	return r, ts, nil
}

// stagesOf is the stored form of a layout: every stage pending.
func stagesOf(l topology.Layout) []rollout.Stage {
	out := make([]rollout.Stage, len(l.Stages))
	for i, st := range l.Stages {
		out[i] = rollout.Stage{Name: st.Name, Wave: st.Wave, Status: rollout.StagePending}
		for _, p := range st.Passes {
			out[i].Passes = append(out[i].Passes, rollout.Pass{Name: p.Name, Region: p.Region, Zone: p.Zone,
				Size: p.Size, BatchSize: p.BatchSize, Batches: p.Batches})
		}
	}
	return out
}

// layoutOf is the layout of stored stages, for core/topology.
func layoutOf(stages []rollout.Stage) topology.Layout {
	l := topology.Layout{Stages: make([]topology.Stage, len(stages))}
	for i, st := range stages {
		l.Stages[i] = topology.Stage{Name: st.Name, Wave: st.Wave}
		for _, p := range st.Passes {
			l.Stages[i].Passes = append(l.Stages[i].Passes, topology.Pass{Name: p.Name, Region: p.Region, Zone: p.Zone,
				Size: p.Size, BatchSize: p.BatchSize, Batches: p.Batches})
		}
	}
	return l
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
	if len(r.Stages) == 0 {
		return r, out
	}
	// In a rollout with stages they join the last pass of the last stage,
	// in new batches; a stage that had passed runs again for them.
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.AgentID
	}
	layout, places := topology.AddStragglers(r.Policy, layoutOf(r.Stages), last, ids)
	stages := keepProgress(stagesOf(layout), r.Stages)
	if s := &stages[len(stages)-1]; s.Status == rollout.StagePassed || s.Status == rollout.StageBaking {
		s.Status, s.BakeUntil, s.FinishedAt = rollout.StageRunning, nil, nil
	}
	r.Stages = stages
	for i := range out {
		out[i].Stage, out[i].Pass, out[i].Batch = places[i].Stage, places[i].Pass, places[i].Batch
	}
	return r, out
}

// keepProgress carries what the stored stages have run into the stages of
// a new layout, which only grew (stragglers): every field of a stage and of
// a pass stays as it was (status, times, the gate with its readings, the
// last red, the freeze that holds it, batch gates and cleared batches, the
// outcome) but the pass's size and batches, which the layout recomputed.
// Rebuilding them from the layout alone would drop the gate of a stage that
// bakes, which would then pass at the end of its bake with no reading.
func keepProgress(layout, stored []rollout.Stage) []rollout.Stage {
	for i := range layout {
		if i >= len(stored) {
			continue
		}
		grown := layout[i].Passes
		layout[i] = stored[i]
		layout[i].Passes = append([]rollout.Pass(nil), stored[i].Passes...)
		for j, p := range grown {
			if j >= len(layout[i].Passes) {
				layout[i].Passes = append(layout[i].Passes, p)
				continue
			}
			q := &layout[i].Passes[j]
			q.Size, q.BatchSize, q.Batches = p.Size, p.BatchSize, p.Batches
		}
	}
	return layout
}
