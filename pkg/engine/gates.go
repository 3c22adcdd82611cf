package engine

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/pkg/gate"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// GateDue names a gate whose reading is due: the stage gate of Stage (Pass
// -1) or the batch gate of one pass of it. The engine only decides that a
// reading is due; the adapter reads (pkg/gate), records the reading on the
// rollout and evaluates again.
type GateDue struct {
	Stage int `json:"stage"`
	Pass  int `json:"pass"`
}

// StageGate is the Pass of a GateDue for the gate of the whole stage.
const StageGate = -1

// health is the rollout's gate, or nil.
func (p *pass) health() *policy.Health { return p.r.Policy.Health }

// beginBake starts the bake of stage s after its last target became final:
// BakeUntil, and the gate when the policy has health checks.
func (p *pass) beginBake(s int, bake time.Duration) {
	st := &p.r.Stages[s]
	since := WholeSecondAfter(p.now)
	st.Status, st.BakeUntil = rollout.StageBaking, timePtr(since.Add(bake))
	if h := p.health(); h != nil {
		g := gate.Begin(since, bake, h.Interval, true)
		if st.Gate != nil {
			// The stage bakes again after stragglers or a retried target
			// reopened it: red readings already taken are not forgotten
			// until a green one follows.
			g.Consecutive, g.LastRed = st.Gate.Consecutive, st.Gate.LastRed
		}
		st.Gate = &g
	}
}

// bake evaluates a baking stage: it reports whether the stage passed, and
// fails the wave with onFailure when its gate turned red.
func (p *pass) bake(s int) (passed bool) {
	st := &p.r.Stages[s]
	if st.Gate == nil {
		if p.now.Before(*st.BakeUntil) {
			p.dl.at(*st.BakeUntil)
			return false
		}
		return true
	}
	h := p.health()
	switch st.Gate.Verdict(h.FailuresToStop, p.now) {
	case gate.Passed:
		return true
	case gate.Failed:
		reason := fmt.Sprintf("stage %s: gate red: %s", st.Name, st.Gate.Reason(h.FailuresToStop))
		st.LastRed = st.Gate.LastRed
		p.emit("rollout.gate_red", reason)
		p.stopWave(st.Wave, s, reason)
		return false
	}
	p.awaitReading(*st.Gate, GateDue{Stage: s, Pass: StageGate})
	return false
}

// awaitReading asks for a reading now, or sets the deadline to the next one.
func (p *pass) awaitReading(g gate.State, due GateDue) {
	if g.Due(p.now) {
		// The task reads it and evaluates again before it waits: no
		// deadline, which could only lie in the past.
		p.gatesDue = append(p.gatesDue, due)
		return
	}
	if g.NextAt != nil {
		p.dl.at(*g.NextAt)
	}
	p.dl.at(g.Until)
}

// batchGates runs the batch gates of stage s (wave batchBake): after every
// batch but the last of a pass, the probes read that batch's targets for
// batchBake before the next batch starts. It returns, per pass, the highest
// batch that may start, and reports false when a red batch gate failed the
// wave.
func (p *pass) batchGates(s int, current map[int]int) (allowed map[int]int, ok bool) {
	st := &p.r.Stages[s]
	wave := p.policyWave(st.Wave)
	allowed = map[int]int{}
	for pi := range st.Passes {
		b, open := current[pi]
		if !open {
			continue
		}
		allowed[pi] = b
		if !wave.BatchGate || b == 0 || st.Passes[pi].Cleared >= b {
			continue
		}
		// batch b-1 is final and its gate has not passed yet
		ps := &st.Passes[pi]
		if ps.Gate == nil || ps.Gate.Batch != b-1 {
			h := p.health()
			checks, interval := h != nil && len(h.Probes) > 0, time.Duration(0)
			if h != nil {
				interval = h.Interval
			}
			ps.Gate = &rollout.BatchGate{Batch: b - 1, State: gate.Begin(WholeSecondAfter(p.now), wave.BatchBake, interval, checks)}
		}
		fts := p.r.Policy.GateFailuresToStop()
		switch ps.Gate.Verdict(fts, p.now) {
		case gate.Passed:
			ps.Cleared = b
		case gate.Failed:
			reason := fmt.Sprintf("stage %s: batch gate of %s red: %s", st.Name, batchName(*ps, b-1), ps.Gate.Reason(fts))
			st.LastRed = ps.Gate.LastRed
			p.emit("rollout.gate_red", reason)
			p.stopWave(st.Wave, s, reason)
			return nil, false
		default:
			allowed[pi] = -1 // nothing starts in this pass yet
			p.awaitReading(ps.Gate.State, GateDue{Stage: s, Pass: pi})
		}
	}
	return allowed, true
}

func batchName(ps rollout.Pass, b int) string { return fmt.Sprintf("%s#%d", ps.Name, b) }

// policyWave is the policy wave of rollout wave w (the implicit rest wave
// has the rollout's values).
func (p *pass) policyWave(w int) policy.Wave {
	if w < len(p.r.Policy.Waves) {
		return p.r.Policy.Waves[w]
	}
	return p.r.Policy.RestWave()
}

// unitQueue is the rollback queue that begins with unit u: empty (not
// nil, which would mean every started target) when no unit ran (-1).
func unitQueue(u int) []int {
	if u < 0 {
		return []int{}
	}
	return []int{u}
}

// stopWave fails wave w at unit u (a stage, or the wave itself without
// stages) and applies onFailure: pause, rollback of every started target,
// rollback-wave or rollback-all.
func (p *pass) stopWave(w, u int, reason string) {
	wave := &p.r.Waves[w]
	wave.Status, wave.FinishedAt = rollout.WaveFailed, timePtr(p.now)
	p.failStages(w)
	switch p.r.Policy.OnFailure {
	case policy.OnFailureRollback:
		p.startRollback(reason)
	case policy.OnFailureRollbackWave:
		p.startRollbackOf(reason, unitQueue(u))
	case policy.OnFailureRollbackAll:
		p.startRollbackOf(reason, append(unitQueue(u), p.passedUnitsBefore(u)...))
	default:
		p.pause(reason)
	}
}
