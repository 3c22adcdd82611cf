package engine

import (
	"fmt"
	"maps"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/windows"
)

// Codes of skipped targets.
const (
	SkipOffline   = "offline_grace" // offline for longer than offlineGracePeriod
	SkipLeftFleet = "left_fleet"    // the agent moved to another fleet or was removed
)

// advanceWaves walks the waves in order: wave n+1 starts only when every
// target of wave n is final and the threshold was not reached.
func (e *evaluation) advanceWaves() {
	for w := range e.r.Waves {
		wave := &e.r.Waves[w]
		switch wave.Status {
		case rollout.WaveCompleted, rollout.WaveSkipped:
			continue
		case rollout.WaveFailed:
			return
		case rollout.WavePending, rollout.WaveWaitingApproval:
			if !e.openWave(w) {
				return
			}
			if wave.Status == rollout.WaveSkipped {
				continue
			}
		}
		if !e.runWave(w) {
			return
		}
		wave.Status = rollout.WaveCompleted
		wave.FinishedAt = timePtr(e.now)
	}
	e.complete()
}

// openWave starts a pending wave, or parks it for approval. It reports
// whether the walk may go on with this wave.
func (e *evaluation) openWave(w int) bool {
	wave := &e.r.Waves[w]
	if e.r.Status == rollout.Paused {
		return false
	}
	if len(e.all.inWave(w)) == 0 {
		wave.Status = rollout.WaveSkipped
		return true
	}
	if (wave.RequireApproval || e.approvalBetween(w)) && !wave.Approved {
		wave.RequireApproval = true
		return e.awaitApproval(w)
	}
	wave.Status = rollout.WaveRunning
	wave.StartedAt = timePtr(e.now)
	if e.r.Status == rollout.WaitingApproval {
		e.r.StatusReason = ""
	}
	e.r.Status = rollout.Running
	return true
}

// complete finishes a running rollout whose waves are all final. A paused
// rollout stays paused until an operator resumes it.
func (e *evaluation) complete() {
	if e.r.Status != rollout.Running {
		return
	}
	e.r.Status = rollout.Completed
	e.r.StatusReason = ""
	e.r.FinishedAt = timePtr(e.now)
	e.emit(rollout.EventCompleted, "")
}

// runWave checks the threshold, starts what may start and reports whether
// every target of the wave is final (and, with stages, every stage passed).
func (e *evaluation) runWave(w int) bool {
	if e.checkThreshold(w) {
		return false
	}
	done := e.startWave(w)
	// The start step may have skipped the last targets that could still
	// start (offline beyond the grace period, gone from the fleet), which
	// can leave a wave that cannot continue: decided now, not by the next
	// evaluation.
	if e.r.Waves[w].Status != rollout.WaveFailed && e.checkThreshold(w) {
		return false
	}
	return done
}

// startWave starts what may start in wave w and reports whether every
// target of it is final (and, with stages, every stage passed).
func (e *evaluation) startWave(w int) bool {
	if len(e.r.Stages) > 0 {
		return e.runStages(w)
	}
	wave := e.all.inWave(w)
	if e.r.Status == rollout.Running {
		e.startTargets(wave, *e.r.Waves[w].StartedAt)
	}
	return wave.allFinal()
}

// runStages walks the stages of wave w in order. A stage starts when the
// one before it passed; in each of its passes only the current batch (the
// first with a target that is not final) may start, so the passes of a
// stage run side by side and each one batch after the other. When every
// target of the stage is final, it bakes until then + the wave's bake
// (computed once and stored), and then passes. It reports whether every
// stage of the wave passed. Example: bake 10m, the stage's last target
// succeeded at 12:00 → the next stage starts at 12:10.
func (e *evaluation) runStages(w int) bool {
	bake := e.waveBake(w)
	for s := range e.r.Stages {
		st := &e.r.Stages[s]
		if st.Wave != w || st.Status == rollout.StagePassed {
			continue
		}
		if st.Status == rollout.StagePending || st.Status == rollout.StageFrozen {
			if e.r.Status != rollout.Running && e.r.Status != rollout.Frozen {
				return false // paused: no new stage begins
			}
			if e.frozen(s) {
				e.held.Freeze += len(e.all.inStage(s).notStarted())
				return false
			}
			st.Status, st.StartedAt = rollout.StageRunning, timePtr(e.now)
			e.emit(rollout.EventStageStarted, "stage "+st.Name)
		}
		if st.Status == rollout.StageRunning {
			if !e.startBatches(s) {
				return false
			}
			if !e.all.inStage(s).allFinal() {
				return false
			}
			st.FinishedAt = timePtr(e.now)
			if bake > 0 || e.health() != nil {
				e.beginBake(s, bake)
			} else {
				e.passStage(s)
			}
		}
		if st.Status == rollout.StageBaking {
			if !e.bake(s) {
				return false
			}
			e.passStage(s)
		}
		if st.Status == rollout.StageFailed {
			return false
		}
	}
	return true
}

// startBatches starts what may start in the current batch of every pass
// of stage s. A start step can end a batch by itself, when it skips the
// last of its targets (offline beyond the grace period, or gone from the
// fleet): the next batch then starts in the same evaluation, since nothing
// else would wake the rollout for it. Each round moves a pass on by one
// batch or stops, so the rounds are bounded by the batches. It reports
// false when a red batch gate failed the wave.
func (e *evaluation) startBatches(s int) bool {
	st := &e.r.Stages[s]
	stage := e.all.inStage(s)
	var allowed map[int]int
	for e.r.Status == rollout.Running {
		current := stage.currentBatches()
		var ok bool
		if allowed, ok = e.batchGates(s, current); !ok {
			return false
		}
		e.startTargets(stage.inBatches(allowed), *st.StartedAt)
		if maps.Equal(current, stage.currentBatches()) {
			break
		}
	}
	e.countBatchHolds(stage, allowed)
	return true
}

// countBatchHolds counts the targets of a stage that wait for their batch:
// behind a batch gate that is still reading (allowed -1 for their pass), or
// behind the batch in flight (maxUnavailable).
func (e *evaluation) countBatchHolds(stage targets, allowed map[int]int) {
	for _, t := range stage.notStarted() {
		switch b, ok := allowed[t.Pass]; {
		case ok && b < 0:
			e.held.BatchGate++
		case !ok || b != t.Batch:
			e.held.MaxUnavailable++
		}
	}
}

// passStage marks stage s passed: the next one may start.
func (e *evaluation) passStage(s int) {
	e.r.Stages[s].Status = rollout.StagePassed
	e.recordPassOutcomes(s)
	e.emit(rollout.EventStagePassed, "stage "+e.r.Stages[s].Name)
}

// recordPassOutcomes gives each pass of the finished stage s that has no
// outcome yet its own (rollout.SettlePasses): failed when one of its
// targets failed or its stage's gate or its own batch gate is red, passed
// otherwise. A pass of a failed stage whose targets all succeeded (another
// pass failed it) passed; a pass of a passed stage with a failure below the
// threshold failed. Passes that already have an outcome keep it: the stage
// finished before and stragglers reopened it.
func (e *evaluation) recordPassOutcomes(s int) {
	e.r.SettlePasses(s, rollout.StagePassed, e.ts, e.now)
}

// waveBake is the bake after each stage of wave w (the implicit rest wave
// has none).
func (e *evaluation) waveBake(w int) time.Duration {
	if w < len(e.r.Policy.Waves) {
		return e.r.Policy.Waves[w].Bake
	}
	return 0
}

// failStages marks the stages of wave w that were running as failed, when
// the wave failed.
func (e *evaluation) failStages(w int) {
	for s := range e.r.Stages {
		if st := &e.r.Stages[s]; st.Wave == w && (st.Status == rollout.StageRunning || st.Status == rollout.StageBaking) {
			st.Status, st.FinishedAt = rollout.StageFailed, timePtr(e.now)
			e.recordPassOutcomes(s)
		}
	}
}

// checkThreshold fails the wave when its unacknowledged failures reach the
// threshold, and pauses or rolls back the rollout per onFailure. Before it,
// the wave that cannot continue at all makes the rollout failed.
func (e *evaluation) checkThreshold(w int) bool {
	c := e.all.inWave(w).classify(e.ackedSet(w))
	wave := &e.r.Waves[w]
	if c.cannotContinue() {
		wave.Status, wave.FinishedAt = rollout.WaveFailed, timePtr(e.now)
		e.failStages(w)
		e.failRollout(fmt.Sprintf("wave %d %q cannot continue: every started target failed in the executor", w, wave.Name))
		return true
	}
	if !ThresholdReached(e.r.Policy.FailureThreshold, len(c.failed), len(c.all)) {
		return false
	}
	failed := e.failedUnit(w)
	reason := fmt.Sprintf("wave %d %q reached the failure threshold: %d of %d targets failed", w, wave.Name, len(c.failed), len(c.all))
	if s := e.stageName(failed); s != "" {
		reason += " in stage " + s
	}
	e.stopWave(w, failed, reason)
	return true
}

func (e *evaluation) ackedSet(w int) map[string]bool {
	keys := e.r.AckedFailures[w]
	if len(keys) == 0 {
		return nil
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}

func (e *evaluation) pause(reason string) {
	e.r.Status = rollout.Paused
	e.r.StatusReason = reason
	e.r.PausedByThreshold = true
	e.emit(rollout.EventPaused, reason)
}

func (e *evaluation) failRollout(reason string) {
	e.r.Status = rollout.Failed
	e.r.StatusReason = reason
	e.emit(rollout.EventFailed, reason)
}

// startTargets starts the targets of ts that have not started and may
// start: the agent is online, a maintenance window is open and
// maxConcurrent is not exhausted (0 = unlimited). The caller gives the
// targets of a running wave, or, with stages, those of the current batch
// of each pass. Offline targets wait offlineGracePeriod from since: the
// start of the wave, or of the stage in a rollout with stages (a later
// stage may begin long after its wave did).
//
// The targets are taken in order, and each is judged when its turn comes:
// once maxConcurrent targets are in flight, the rest wait as they are,
// without a look at their agents (beyondCapacity). So a target whose agent
// left the fleet, or stayed offline past the grace period, is skipped when
// its turn comes, not while maxConcurrent others run ahead of it; and an
// evaluation of a large wave needs the agents of the targets in flight and
// of the next few only, not of all of them (Input.Read).
//
// An agent not read yet is listed missing and assumed to start, so that a
// round reads as many candidates as there are free slots. Each candidate
// that was read and held back (offline, gone, outside its window) lets
// one more be read ahead without taking a slot: a wave whose agents are
// mostly offline then reads twice as many each round, and needs a few
// rounds, not one per slot's worth of offline agents.
func (e *evaluation) startTargets(ts targets, since time.Time) {
	active := len(e.all.inFlight())
	ahead := 0 // candidates to read ahead: one per candidate held back
	for _, t := range ts.notStarted() {
		if limit := e.r.Policy.MaxConcurrent; limit > 0 && active >= limit {
			e.beyondCapacity(t)
			continue
		}
		if e.unread(t.AgentID) {
			if ahead > 0 {
				ahead--
			} else {
				active++ // judged by the next round; assumed to start meanwhile
			}
			continue
		}
		if e.holdBack(t, since) {
			ahead++
			continue
		}
		e.start(t)
		active++
	}
}

// beyondCapacity holds a target that waits behind maxConcurrent. It keeps
// its status, except one waiting for a maintenance window that opened
// meanwhile, which is pending again: the rollout page should not show a
// target waiting for a window that is open.
func (e *evaluation) beyondCapacity(t *rollout.Target) {
	e.held.MaxConcurrent++
	if t.Status != rollout.TargetWaitingWindow {
		return
	}
	a, ok := e.agent(t.AgentID)
	if !ok || len(e.r.Policy.MaintenanceWindows) == 0 {
		return
	}
	if closed, next := e.windowClosed(a); closed {
		e.dl.at(next)
	} else {
		t.Status = rollout.TargetPending
	}
}

// holdBack applies the rules of a start to target t, which has not
// started and whose turn came, in order: a target whose agent left the
// fleet is skipped, one outside its maintenance windows waits for the
// next, and one whose agent is offline waits until since +
// offlineGracePeriod and is then skipped. It reports whether t stays back,
// and counts what held it (Held). Example: offlineGracePeriod 15m, the
// wave began at 12:00 → an offline agent holds its target until 12:15.
func (e *evaluation) holdBack(t *rollout.Target, since time.Time) bool {
	pol := e.r.Policy
	a, ok := e.agent(t.AgentID)
	if !ok || a.Fleet != e.r.Fleet {
		e.skip(t, SkipLeftFleet, "the agent is no longer a member of the fleet")
		return true
	}
	if closed, next := e.windowClosed(a); closed {
		t.Status = rollout.TargetWaitingWindow
		e.dl.at(next)
		e.held.Window++
		return true
	}
	if !e.online(a) {
		graceEnd := since.Add(pol.OfflineGracePeriod)
		if !e.now.Before(graceEnd) {
			e.skip(t, SkipOffline, fmt.Sprintf("the agent was offline for longer than offlineGracePeriod %s", pol.OfflineGracePeriod))
			return true
		}
		t.Status = rollout.TargetPending
		e.dl.at(graceEnd)
		e.held.Offline++
		return true
	}
	return false
}

func (e *evaluation) start(t *rollout.Target) {
	t.Status = rollout.TargetInProgress
	t.StartedAt = timePtr(e.now)
	t.VerifiedAt, t.ReportedAt, t.FinishedAt = nil, nil, nil
	e.order(OrderStart, *t, t.ToRef)
	e.dl.at(e.now.Add(e.r.Policy.ApplyTimeout))
	e.started++
}

func (e *evaluation) skip(t *rollout.Target, code, reason string) {
	t.Status = rollout.TargetSkipped
	t.ReasonCode = code
	t.Reason = reason
	t.FinishedAt = timePtr(e.now)
}

// windowClosed reports whether the policy has maintenance windows and none
// is open now in agent a's zone, and if so when the next one opens.
func (e *evaluation) windowClosed(a agent.Agent) (closed bool, next time.Time) {
	pol := e.r.Policy
	if len(pol.MaintenanceWindows) == 0 {
		return false, time.Time{}
	}
	open, next := e.window(pol.Zones(e.tz).Resolve(a))
	return !open, next
}

// window says whether a maintenance window is open now in zone loc and, if
// not, when the next one opens. Agents share few zones, so an evaluation
// computes each zone once.
func (e *evaluation) window(loc *time.Location) (open bool, next time.Time) {
	if w, ok := e.windowByZone[loc]; ok {
		return w.open, w.next
	}
	ws := e.r.Policy.MaintenanceWindows
	open = windows.Open(ws, loc, e.now)
	if !open {
		next, _ = windows.NextOpen(ws, loc, e.now)
	}
	if e.windowByZone == nil {
		e.windowByZone = map[*time.Location]zoneWindow{}
	}
	e.windowByZone[loc] = zoneWindow{open, next}
	return open, next
}

type zoneWindow struct {
	open bool
	next time.Time
}
