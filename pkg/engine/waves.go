package engine

import (
	"fmt"
	"maps"
	"time"

	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/windows"
)

// Codes of skipped targets.
const (
	SkipOffline   = "offline_grace" // offline for longer than offlineGracePeriod
	SkipLeftFleet = "left_fleet"    // the agent moved to another fleet or was removed
)

// advanceWaves walks the waves in order: wave n+1 starts only when every
// target of wave n is final and the threshold was not reached.
func (p *pass) advanceWaves() {
	for w := range p.r.Waves {
		wave := &p.r.Waves[w]
		switch wave.Status {
		case rollout.WaveCompleted, rollout.WaveSkipped:
			continue
		case rollout.WaveFailed:
			return
		case rollout.WavePending, rollout.WaveWaitingApproval:
			if !p.openWave(w) {
				return
			}
			if wave.Status == rollout.WaveSkipped {
				continue
			}
		}
		if !p.runWave(w) {
			return
		}
		wave.Status = rollout.WaveCompleted
		wave.FinishedAt = timePtr(p.now)
	}
	p.complete()
}

// openWave starts a pending wave, or parks it for approval. It reports
// whether the walk may go on with this wave.
func (p *pass) openWave(w int) bool {
	wave := &p.r.Waves[w]
	if p.r.Status == rollout.Paused {
		return false
	}
	if p.waveSize(w) == 0 {
		wave.Status = rollout.WaveSkipped
		return true
	}
	if (wave.RequireApproval || p.approvalBetween(w)) && !wave.Approved {
		wave.RequireApproval = true
		return p.awaitApproval(w)
	}
	wave.Status = rollout.WaveRunning
	wave.StartedAt = timePtr(p.now)
	if p.r.Status == rollout.WaitingApproval {
		p.r.StatusReason = ""
	}
	p.r.Status = rollout.Running
	return true
}

// complete finishes a running rollout whose waves are all final. A paused
// rollout stays paused until an operator resumes it.
func (p *pass) complete() {
	if p.r.Status != rollout.Running {
		return
	}
	p.r.Status = rollout.Completed
	p.r.StatusReason = ""
	p.r.FinishedAt = timePtr(p.now)
	p.emit("rollout.completed", "")
}

func (p *pass) waveSize(w int) int {
	n := 0
	for i := range p.ts {
		if p.ts[i].Wave == w {
			n++
		}
	}
	return n
}

// runWave checks the threshold, starts what may start and reports whether
// every target of the wave is final (and, with stages, every stage passed).
func (p *pass) runWave(w int) bool {
	if p.checkThreshold(w) {
		return false
	}
	done := p.startWave(w)
	// The start step may have skipped the last targets that could still
	// start (offline beyond the grace period, gone from the fleet), which
	// can leave a wave that cannot continue: decided now, not by the next
	// pass.
	if p.r.Waves[w].Status != rollout.WaveFailed && p.checkThreshold(w) {
		return false
	}
	return done
}

// startWave starts what may start in wave w and reports whether every
// target of it is final (and, with stages, every stage passed).
func (p *pass) startWave(w int) bool {
	if len(p.r.Stages) > 0 {
		return p.runStages(w)
	}
	if p.r.Status == rollout.Running {
		p.startTargets(w, *p.r.Waves[w].StartedAt, nil)
	}
	for i := range p.ts {
		if p.ts[i].Wave == w && !p.ts[i].Status.Final() {
			return false
		}
	}
	return true
}

// runStages walks the stages of wave w in order. A stage starts when the
// one before it passed; in each of its passes only the current batch (the
// first with a target that is not final) may start, so the passes of a
// stage run side by side and each one batch after the other. When every
// target of the stage is final, it bakes until then + the wave's bake
// (computed once and stored), and then passes. It reports whether every
// stage of the wave passed. Example: bake 10m, the stage's last target
// succeeded at 12:00 → the next stage starts at 12:10.
func (p *pass) runStages(w int) bool {
	bake := p.waveBake(w)
	for s := range p.r.Stages {
		st := &p.r.Stages[s]
		if st.Wave != w || st.Status == rollout.StagePassed {
			continue
		}
		if st.Status == rollout.StagePending || st.Status == rollout.StageFrozen {
			if p.r.Status != rollout.Running && p.r.Status != rollout.Frozen {
				return false // paused: no new stage begins
			}
			if p.frozen(s) {
				return false
			}
			st.Status, st.StartedAt = rollout.StageRunning, timePtr(p.now)
			p.emit("rollout.stage_started", "stage "+st.Name)
		}
		if st.Status == rollout.StageRunning {
			if !p.startBatches(w, s) {
				return false
			}
			if !p.stageFinal(s) {
				return false
			}
			st.FinishedAt = timePtr(p.now)
			if bake > 0 || p.health() != nil {
				p.beginBake(s, bake)
			} else {
				p.passStage(s)
			}
		}
		if st.Status == rollout.StageBaking {
			if !p.bake(s) {
				return false
			}
			p.passStage(s)
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
// fleet): the next batch then starts in the same pass, since nothing else
// would wake the rollout for it. Each round moves a pass on by one batch
// or stops, so the rounds are bounded by the batches. It reports false
// when a red batch gate failed the wave.
func (p *pass) startBatches(w, s int) bool {
	st := &p.r.Stages[s]
	for p.r.Status == rollout.Running {
		current := p.currentBatches(s)
		allowed, ok := p.batchGates(s, current)
		if !ok {
			return false
		}
		p.startTargets(w, *st.StartedAt, func(t *rollout.Target) bool { return t.Stage == s && t.Batch == allowed[t.Pass] })
		if maps.Equal(current, p.currentBatches(s)) {
			break
		}
	}
	return true
}

// passStage marks stage s passed: the next one may start.
func (p *pass) passStage(s int) {
	p.r.Stages[s].Status = rollout.StagePassed
	p.recordPassOutcomes(s)
	p.emit("rollout.stage_passed", "stage "+p.r.Stages[s].Name)
}

// recordPassOutcomes gives each pass of the finished stage s that has no
// outcome yet its own (rollout.SettlePasses): failed when one of its
// targets failed or its stage's gate or its own batch gate is red, passed
// otherwise. A pass of a failed stage whose targets all succeeded (another
// pass failed it) passed; a pass of a passed stage with a failure below the
// threshold failed. Passes that already have an outcome keep it: the stage
// finished before and stragglers reopened it.
func (p *pass) recordPassOutcomes(s int) {
	p.r.SettlePasses(s, rollout.StagePassed, p.ts, p.now)
}

// waveBake is the bake after each stage of wave w (the implicit rest wave
// has none).
func (p *pass) waveBake(w int) time.Duration {
	if w < len(p.r.Policy.Waves) {
		return p.r.Policy.Waves[w].Bake
	}
	return 0
}

// currentBatches gives, per pass of stage s, the batch that may start:
// the batch in flight, if one is, else the lowest batch with a target that
// is not final. A target that retry-failed sent back to an earlier batch
// waits until the batch in flight is final: one batch (maxUnavailable
// targets) at a time, whatever order the batches come back in.
func (p *pass) currentBatches(s int) map[int]int {
	current, flying := map[int]int{}, map[int]int{}
	for i := range p.ts {
		t := &p.ts[i]
		if t.Stage != s || t.Status.Final() {
			continue
		}
		if b, ok := current[t.Pass]; !ok || t.Batch < b {
			current[t.Pass] = t.Batch
		}
		if t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying {
			if b, ok := flying[t.Pass]; !ok || t.Batch < b {
				flying[t.Pass] = t.Batch
			}
		}
	}
	maps.Copy(current, flying)
	return current
}

func (p *pass) stageFinal(s int) bool {
	for i := range p.ts {
		if p.ts[i].Stage == s && !p.ts[i].Status.Final() {
			return false
		}
	}
	return true
}

// failStages marks the stages of wave w that were running as failed, when
// the wave failed.
func (p *pass) failStages(w int) {
	for s := range p.r.Stages {
		if st := &p.r.Stages[s]; st.Wave == w && (st.Status == rollout.StageRunning || st.Status == rollout.StageBaking) {
			st.Status, st.FinishedAt = rollout.StageFailed, timePtr(p.now)
			p.recordPassOutcomes(s)
		}
	}
}

// checkThreshold fails the wave when its unacknowledged failures reach the
// threshold, and pauses or rolls back the rollout per onFailure. Before it,
// the wave that cannot continue at all makes the rollout failed.
func (p *pass) checkThreshold(w int) bool {
	c := p.classify(w)
	wave := &p.r.Waves[w]
	if c.cannotContinue() {
		wave.Status, wave.FinishedAt = rollout.WaveFailed, timePtr(p.now)
		p.failStages(w)
		p.failRollout(fmt.Sprintf("wave %d %q cannot continue: every started target failed in the executor", w, wave.Name))
		return true
	}
	if !ThresholdReached(p.r.Policy.FailureThreshold, c.failed, c.total) {
		return false
	}
	failed := p.failedUnit(w)
	reason := fmt.Sprintf("wave %d %q reached the failure threshold: %d of %d targets failed", w, wave.Name, c.failed, c.total)
	if s := p.stageName(failed); s != "" {
		reason += " in stage " + s
	}
	p.stopWave(w, failed, reason)
	return true
}

// waveCounts partitions the targets of a wave for the failure rules.
type waveCounts struct {
	total          int
	notStarted     int // pending or waiting for a window: they may still start
	started        int
	failed         int // unacknowledged failures
	executorFailed int // of those, failed in the executor's Start or Validate
}

func (p *pass) classify(w int) waveCounts {
	var c waveCounts
	acked := p.ackedSet(w)
	for i := range p.ts {
		t := &p.ts[i]
		if t.Wave != w {
			continue
		}
		c.total++
		if t.Status.NotStarted() {
			c.notStarted++
		}
		if t.StartedAt != nil {
			c.started++
		}
		if t.Status == rollout.TargetFailed && !acked[t.AttemptKey()] {
			c.failed++
			if t.ReasonCode == FailExecutor {
				c.executorFailed++
			}
		}
	}
	return c
}

// cannotContinue: no target of the wave can still start, and every one that
// started failed in the executor (a misconfigured executor fails all it
// touches). While targets remain that may start, a failed Start is one
// failure among others and counts toward the threshold: with maxConcurrent 1
// a transient error of the first Start must not fail the whole rollout.
func (c waveCounts) cannotContinue() bool {
	return c.notStarted == 0 && c.started > 0 && c.executorFailed == c.started
}

func (p *pass) ackedSet(w int) map[string]bool {
	keys := p.r.AckedFailures[w]
	if len(keys) == 0 {
		return nil
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}

func (p *pass) pause(reason string) {
	p.r.Status = rollout.Paused
	p.r.StatusReason = reason
	p.r.PausedByThreshold = true
	p.emit("rollout.paused", reason)
}

func (p *pass) failRollout(reason string) {
	p.r.Status = rollout.Failed
	p.r.StatusReason = reason
	p.emit("rollout.failed", reason)
}

// startTargets starts the pending targets of a running wave that may start:
// the agent is online, a maintenance window is open, maxConcurrent is not
// exhausted (0 = unlimited), and, with stages, allow says the target is in
// the current batch of its pass. Offline targets wait offlineGracePeriod
// from since: the start of the wave, or of the stage in a rollout with
// stages (a later stage may begin long after its wave did).
func (p *pass) startTargets(w int, since time.Time, allow func(*rollout.Target) bool) {
	pol := p.r.Policy
	active := p.inFlight()
	zones := pol.Zones(p.tz)
	for i := range p.ts {
		t := &p.ts[i]
		if t.Wave != w || !t.Status.NotStarted() || (allow != nil && !allow(t)) {
			continue
		}
		a, ok := p.agent(t.AgentID)
		if !ok || a.Fleet != p.r.Fleet {
			p.skip(i, SkipLeftFleet, "the agent is no longer a member of the fleet")
			continue
		}
		if len(pol.MaintenanceWindows) > 0 {
			if open, next := p.window(zones.Resolve(a)); !open {
				p.setStatus(i, rollout.TargetWaitingWindow)
				p.dl.at(next)
				continue
			}
		}
		if !p.online(a) {
			graceEnd := since.Add(pol.OfflineGracePeriod)
			if !p.now.Before(graceEnd) {
				p.skip(i, SkipOffline, fmt.Sprintf("the agent was offline for longer than offlineGracePeriod %s", pol.OfflineGracePeriod))
				continue
			}
			p.setStatus(i, rollout.TargetPending)
			p.dl.at(graceEnd)
			continue
		}
		if pol.MaxConcurrent > 0 && active >= pol.MaxConcurrent {
			p.setStatus(i, rollout.TargetPending)
			continue
		}
		p.start(i)
		active++
	}
}

func (p *pass) inFlight() int {
	n := 0
	for i := range p.ts {
		if s := p.ts[i].Status; s == rollout.TargetInProgress || s == rollout.TargetVerifying {
			n++
		}
	}
	return n
}

func (p *pass) start(i int) {
	t := &p.ts[i]
	t.Status = rollout.TargetInProgress
	t.StartedAt = timePtr(p.now)
	t.VerifiedAt, t.ReportedAt, t.FinishedAt = nil, nil, nil
	p.mark(i)
	p.order(OrderStart, *t, t.ToRef)
	p.dl.at(p.now.Add(p.r.Policy.ApplyTimeout))
}

func (p *pass) setStatus(i int, s rollout.TargetStatus) {
	if p.ts[i].Status != s {
		p.ts[i].Status = s
		p.mark(i)
	}
}

func (p *pass) skip(i int, code, reason string) {
	t := &p.ts[i]
	t.Status = rollout.TargetSkipped
	t.ReasonCode = code
	t.Reason = reason
	t.FinishedAt = timePtr(p.now)
	p.mark(i)
}

// window says whether a maintenance window is open now in zone loc and, if
// not, when the next one opens. Agents share few zones, so a pass computes
// each zone once.
func (p *pass) window(loc *time.Location) (open bool, next time.Time) {
	if w, ok := p.windowByZone[loc]; ok {
		return w.open, w.next
	}
	ws := p.r.Policy.MaintenanceWindows
	open = windows.Open(ws, loc, p.now)
	if !open {
		next, _ = windows.NextOpen(ws, loc, p.now)
	}
	if p.windowByZone == nil {
		p.windowByZone = map[*time.Location]zoneWindow{}
	}
	p.windowByZone[loc] = zoneWindow{open, next}
	return open, next
}

type zoneWindow struct {
	open bool
	next time.Time
}
