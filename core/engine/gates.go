package engine

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// GateDue names a gate whose reading is due: the stage gate of Stage (Pass
// -1) or the batch gate of one pass of it. The engine only decides that a
// reading is due; the adapter reads (core/gate), records the reading on the
// rollout and evaluates again.
type GateDue struct {
	Stage int `json:"stage"`
	Pass  int `json:"pass"`
}

// StageGate is the Pass of a GateDue for the gate of the whole stage.
const StageGate = -1

// health is the rollout's gate, or nil.
func (e *evaluation) health() *policy.Health { return e.r.Policy.Health }

// beginBake starts the bake of stage s after its last target became final:
// BakeUntil, and the gate when the policy has health checks.
func (e *evaluation) beginBake(s int, bake time.Duration) {
	st := &e.r.Stages[s]
	since := WholeSecondAfter(e.now)
	st.Status, st.BakeUntil = rollout.StageBaking, timePtr(since.Add(bake))
	if h := e.health(); h != nil {
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
func (e *evaluation) bake(s int) (passed bool) {
	st := &e.r.Stages[s]
	if st.Gate == nil {
		if e.now.Before(*st.BakeUntil) {
			e.dl.at(*st.BakeUntil)
			return false
		}
		return true
	}
	h := e.health()
	switch st.Gate.Verdict(h.FailuresToStop, e.now) {
	case gate.Passed:
		return true
	case gate.Failed:
		reason := fmt.Sprintf("stage %s: gate red: %s", st.Name, st.Gate.Reason(h.FailuresToStop))
		st.LastRed = st.Gate.LastRed
		e.emit(rollout.EventGateRed, reason)
		e.stopWave(st.Wave, s, reason)
		return false
	}
	e.awaitReading(*st.Gate, GateDue{Stage: s, Pass: StageGate})
	return false
}

// awaitReading asks for a reading now, or sets the deadline to the next one.
func (e *evaluation) awaitReading(g gate.State, due GateDue) {
	if g.Due(e.now) {
		// The task reads it and evaluates again before it waits: no
		// deadline, which could only lie in the past.
		e.gatesDue = append(e.gatesDue, due)
		return
	}
	if g.NextAt != nil {
		e.dl.at(*g.NextAt)
	}
	e.dl.at(g.Until)
}

// batchGates runs the batch gates of stage s (wave batchBake): after every
// batch but the last of a pass, the probes read that batch's targets for
// batchBake before the next batch starts. It returns, per pass, the highest
// batch that may start, and reports false when a red batch gate failed the
// wave.
func (e *evaluation) batchGates(s int, current map[int]int) (allowed map[int]int, ok bool) {
	st := &e.r.Stages[s]
	wave := e.policyWave(st.Wave)
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
			h := e.health()
			checks, interval := h != nil && len(h.Probes) > 0, time.Duration(0)
			if h != nil {
				interval = h.Interval
			}
			ps.Gate = &rollout.BatchGate{Batch: b - 1, State: gate.Begin(WholeSecondAfter(e.now), wave.BatchBake, interval, checks)}
		}
		fts := e.r.Policy.GateFailuresToStop()
		switch ps.Gate.Verdict(fts, e.now) {
		case gate.Passed:
			ps.Cleared = b
		case gate.Failed:
			reason := fmt.Sprintf("stage %s: batch gate of %s red: %s", st.Name, batchName(*ps, b-1), ps.Gate.Reason(fts))
			st.LastRed = ps.Gate.LastRed
			e.emit(rollout.EventGateRed, reason)
			e.stopWave(st.Wave, s, reason)
			return nil, false
		default:
			allowed[pi] = -1 // nothing starts in this pass yet
			e.awaitReading(ps.Gate.State, GateDue{Stage: s, Pass: pi})
		}
	}
	return allowed, true
}

func batchName(ps rollout.Pass, b int) string { return fmt.Sprintf("%s#%d", ps.Name, b) }

// policyWave is the policy wave of rollout wave w (the implicit rest wave
// has the rollout's values).
func (e *evaluation) policyWave(w int) policy.Wave {
	if w < len(e.r.Policy.Waves) {
		return e.r.Policy.Waves[w]
	}
	return e.r.Policy.RestWave()
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
func (e *evaluation) stopWave(w, u int, reason string) {
	wave := &e.r.Waves[w]
	wave.Status, wave.FinishedAt = rollout.WaveFailed, timePtr(e.now)
	e.failStages(w)
	switch e.r.Policy.OnFailure {
	case policy.OnFailureRollback:
		e.startRollback(reason)
	case policy.OnFailureRollbackWave:
		e.startRollbackOf(reason, unitQueue(u))
	case policy.OnFailureRollbackAll:
		e.startRollbackOf(reason, append(unitQueue(u), e.passedUnitsBefore(u)...))
	default:
		e.pause(reason)
	}
}
