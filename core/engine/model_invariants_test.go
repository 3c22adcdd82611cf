package engine

import (
	"slices"

	"github.com/myriarch/myriarch/core/freeze"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/windows"
	"time"
)

// modelCheck holds one step: the state before (b), the result (r) and the
// state after it (a). Each method checks one invariant of the model; each
// was shown to catch its defect by undoing the fix once.
type modelCheck struct {
	m    *model
	what string
	b, a state
	r    Result
	now  time.Time
}

func (c modelCheck) fatalf(format string, args ...any) {
	c.m.rt.Fatalf("after %s at +%s: "+format, append([]any{c.what, c.now.Sub(t0)}, args...)...)
}

// deadline (8): the next deadline, when there is one, lies after now; one
// at or before now would make the state machine evaluate again at once.
func (c modelCheck) deadline() {
	if d := c.r.NextDeadline; !d.IsZero() && !d.After(c.now) {
		c.fatalf("next deadline %s is not after now", d.Sub(t0))
	}
}

// gates (1): a stage with health checks passes only when its readings were
// taken until the end of its bake and the last one was green; a stage
// passes no earlier than its bake ends; a batch after the first of a pass
// with batch gates starts only when the gate of the batch before passed.
func (c modelCheck) gates() {
	pol := c.a.r.Policy
	for s, st := range c.a.r.Stages {
		if st.Status != rollout.StagePassed || (s < len(c.b.r.Stages) && c.b.r.Stages[s].Status == rollout.StagePassed) {
			continue
		}
		if pol.Health != nil {
			g := st.Gate
			if g == nil || g.Readings == 0 || g.Consecutive != 0 || g.NextAt != nil || c.now.Before(g.Until) {
				c.fatalf("stage %s passed with its gate %+v: readings until the end of the bake, the last green, are required", st.Name, g)
			}
		}
		if bake := pol.Waves[min(st.Wave, len(pol.Waves)-1)].Bake; st.Wave < len(pol.Waves) && bake > 0 && (st.BakeUntil == nil || c.now.Before(*st.BakeUntil)) {
			c.fatalf("stage %s passed before the end of its bake %s (until %v)", st.Name, bake, st.BakeUntil)
		}
	}
	for _, t := range c.started() {
		if t.Wave >= len(pol.Waves) || !pol.Waves[t.Wave].BatchGate || t.Batch == 0 || len(c.a.r.Stages) == 0 {
			continue
		}
		if ps := c.a.r.Stages[t.Stage].Passes[t.Pass]; ps.Cleared < t.Batch {
			c.fatalf("target %s of batch %d of %s started with %d batches cleared by their gate", t.AgentID, t.Batch, ps.Name, ps.Cleared)
		}
	}
}

// started lists the targets the step started, as they are after it.
func (c modelCheck) started() []rollout.Target {
	var out []rollout.Target
	for _, o := range c.r.Orders {
		if o.Kind == OrderStart {
			out = append(out, c.target(o.AgentID))
		}
	}
	return out
}

func (c modelCheck) target(id string) rollout.Target {
	for _, t := range c.a.ts {
		if t.AgentID == id {
			return t
		}
	}
	c.fatalf("an order names %s, which has no target", id)
	return rollout.Target{}
}

func (c modelCheck) before(id string) (rollout.Target, bool) {
	for _, t := range c.b.ts {
		if t.AgentID == id {
			return t, true
		}
	}
	return rollout.Target{}, false
}

// guarded reports whether an approval guards wave w: requireApproval, or
// a wave that approvalsBetween names before it with only waves without
// targets in between.
func (c modelCheck) guarded(w int) bool {
	pol := c.a.r.Policy
	if w < len(pol.Waves) && pol.Waves[w].RequireApproval || c.a.r.Waves[w].RequireApproval && c.a.r.Waves[w].Implicit {
		return true
	}
	for i := w - 1; i >= 0; i-- {
		if slices.Contains(pol.ApprovalsBetween, c.a.r.Waves[i].Name) {
			return true
		}
		if c.waveSize(i) > 0 {
			return false
		}
	}
	return false
}

func (c modelCheck) waveSize(w int) int {
	n := 0
	for _, t := range c.a.ts {
		if t.Wave == w {
			n++
		}
	}
	return n
}

// approvals (2): no target of a guarded wave starts before the required
// distinct approvals are in, none by the rollout's creator; a rejection or
// an expiry applies onFailure.
func (c modelCheck) approvals() {
	need := max(c.a.r.Policy.Approvals.Required, 1)
	for _, t := range c.started() {
		if !c.guarded(t.Wave) {
			continue
		}
		wave := c.a.r.Waves[t.Wave]
		ids := map[string]bool{}
		for _, d := range wave.Approvals {
			if d.ActorID == c.a.r.CreatedBy {
				c.fatalf("wave %d approved by its creator %s", t.Wave, d.ActorID)
			}
			ids[d.ActorID] = true
		}
		if len(ids) < need {
			c.fatalf("target %s of wave %d %q started with %d of %d approvals", t.AgentID, t.Wave, wave.Name, len(ids), need)
		}
	}
	for w, wave := range c.a.r.Waves {
		if wave.Rejected == nil || c.b.r.Waves[w].Rejected != nil {
			continue
		}
		switch st := c.a.r.Status; c.a.r.Policy.OnFailure {
		case policy.OnFailureRollback, policy.OnFailureRollbackWave, policy.OnFailureRollbackAll:
			if st != rollout.RollingBack && st != rollout.RolledBack {
				c.fatalf("wave %d rejected or expired with onFailure %s: rollout %s", w, c.a.r.Policy.OnFailure, st)
			}
		default:
			if st != rollout.Paused {
				c.fatalf("wave %d rejected or expired with onFailure pause: rollout %s", w, st)
			}
		}
	}
}

// completion (3): a wave or a rollout is completed only when every target
// of it is final, and a wave with stages only when they all passed; so a
// target that retry-failed reset either runs again or nothing completes.
func (c modelCheck) completion() {
	for w, wave := range c.a.r.Waves {
		if wave.Status != rollout.WaveCompleted && c.a.r.Status != rollout.Completed {
			continue
		}
		for _, t := range c.a.ts {
			if t.Wave == w && !t.Status.Final() {
				c.fatalf("wave %d is %s, rollout %s, while target %s is %s", w, wave.Status, c.a.r.Status, t.AgentID, t.Status)
			}
		}
		for _, st := range c.a.r.Stages {
			if st.Wave == w && st.Status != rollout.StagePassed {
				c.fatalf("wave %d is %s while its stage %s is %s", w, wave.Status, st.Name, st.Status)
			}
		}
	}
}

// inFlight (4): at most maxConcurrent targets of the rollout in flight
// when one starts; in a pass, only one batch in flight, of at most its
// size, and a batch starts only when the batches before it are final;
// nothing starts while a wave has failed; every started target was
// waiting to start.
func (c modelCheck) inFlight() {
	starts := c.started()
	if len(starts) == 0 {
		return
	}
	for _, w := range c.a.r.Waves {
		if w.Status == rollout.WaveFailed {
			c.fatalf("%d targets started while wave %d %q has failed", len(starts), w.Index, w.Name)
		}
	}
	n, batchOf, inBatch := 0, map[[2]int]int{}, map[[2]int]int{}
	for _, t := range c.a.ts {
		if t.Status != rollout.TargetInProgress && t.Status != rollout.TargetVerifying {
			continue
		}
		n++
		if len(c.a.r.Stages) == 0 {
			continue
		}
		k := [2]int{t.Stage, t.Pass}
		if b, ok := batchOf[k]; ok && b != t.Batch {
			c.fatalf("batches %d and %d of pass %v in flight together", b, t.Batch, k)
		}
		batchOf[k] = t.Batch
		inBatch[k]++
		if size := c.a.r.Stages[t.Stage].Passes[t.Pass].BatchSize; inBatch[k] > size {
			c.fatalf("%d targets of pass %v in flight, batches of %d", inBatch[k], k, size)
		}
	}
	if m := c.a.r.Policy.MaxConcurrent; m > 0 && n > m {
		c.fatalf("%d targets in flight after starting more, maxConcurrent %d", n, m)
	}
	for _, t := range starts {
		if was, ok := c.before(t.AgentID); !ok || !was.Status.NotStarted() {
			c.fatalf("started target %s was %s, not waiting to start", t.AgentID, was.Status)
		}
		for _, o := range c.a.ts {
			// a target that retry-failed sent back waits for the batch in
			// flight; only first attempts keep the order of the batches
			if len(c.a.r.Stages) > 0 && o.Stage == t.Stage && o.Pass == t.Pass && o.Batch < t.Batch && !o.Status.Final() && o.Attempt == 1 && t.Attempt == 1 {
				c.fatalf("batch %d of pass %d/%d started while %s of batch %d is %s", t.Batch, t.Stage, t.Pass, o.AgentID, o.Batch, o.Status)
			}
		}
	}
}

// freezesAndWindows (5): no stage of a frozen region begins without an
// override; no target starts outside a maintenance window of its agent's
// zone.
func (c modelCheck) freezesAndWindows() {
	pol := c.a.r.Policy
	for s, st := range c.a.r.Stages {
		began := st.StartedAt != nil && (s >= len(c.b.r.Stages) || c.b.r.Stages[s].StartedAt == nil)
		if !began || c.a.r.FreezeOverride != nil {
			continue
		}
		if h, held := freeze.Active(pol.Freezes, c.stageRegions(s), c.now); held {
			c.fatalf("stage %s began during freeze %q without an override", st.Name, h.Freeze.Name)
		}
	}
	if len(pol.MaintenanceWindows) == 0 {
		return
	}
	zones := pol.Zones("")
	for _, t := range c.started() {
		if !windows.Open(pol.MaintenanceWindows, zones.Resolve(c.m.f.agents[t.AgentID]), c.now) {
			c.fatalf("target %s started outside its maintenance window", t.AgentID)
		}
	}
}

// stageRegions: the regions of a stage's passes, or, for a pass not split
// by region, those its agents report.
func (c modelCheck) stageRegions(s int) []string {
	var out []string
	for _, ps := range c.a.r.Stages[s].Passes {
		if ps.Region != "" {
			out = append(out, ps.Region)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, t := range c.a.ts {
		if t.Stage == s {
			out = append(out, c.m.f.agents[t.AgentID].Attributes["cloud.region"])
		}
	}
	return out
}

// outcomes (7): a pass that gains an outcome failed exactly when one of its
// targets failed or its stage's or its batch gate was red; cancelled only
// when its stage was ended from outside; and every pass of a stage that
// ended has one.
func (c modelCheck) outcomes() {
	fts := c.a.r.Policy.GateFailuresToStop()
	red := func(g *gate.State) bool { return g != nil && g.Verdict(fts, c.now) == gate.Failed }
	for s, st := range c.a.r.Stages {
		for p, ps := range st.Passes {
			if ps.Outcome == "" || (s < len(c.b.r.Stages) && p < len(c.b.r.Stages[s].Passes) && c.b.r.Stages[s].Passes[p].Outcome != "") {
				continue
			}
			failed := red(st.Gate) || ps.Gate != nil && red(&ps.Gate.State)
			for _, t := range c.a.ts {
				failed = failed || t.Stage == s && t.Pass == p && c.hadFailed(t)
			}
			if (ps.Outcome == rollout.StageFailed) != failed {
				c.fatalf("pass %s gained outcome %s; one of its targets failed or its gate was red: %v", ps.Name, ps.Outcome, failed)
			}
		}
		ended := st.Status == rollout.StagePassed || st.Status == rollout.StageFailed
		if s < len(c.b.r.Stages) && ended && (c.b.r.Stages[s].Status == rollout.StageRunning || c.b.r.Stages[s].Status == rollout.StageBaking) {
			for _, ps := range st.Passes {
				if ps.Outcome == "" {
					c.fatalf("pass %s of stage %s, which ended %s, has no outcome", ps.Name, st.Name, st.Status)
				}
			}
		}
	}
}

// rollbacks (6): rollback-wave returns exactly the failed stage (or wave),
// rollback-all it and every stage that had passed before it, nearest
// first, a plain rollback every started target; no target is reset twice
// in one rollback.
func (m *model) rollbacks(c modelCheck) {
	began := c.b.r.Status != rollout.RollingBack && c.a.r.RollbackStartedAt != nil &&
		(c.b.r.RollbackStartedAt == nil || !c.b.r.RollbackStartedAt.Equal(*c.a.r.RollbackStartedAt))
	if began {
		m.rollback = c.episode()
	}
	e := m.rollback
	if e == nil {
		return
	}
	for _, o := range c.r.Orders {
		if o.Kind != OrderReset {
			continue
		}
		if e.resetOf[o.AgentID] {
			c.fatalf("target %s reset twice in one rollback", o.AgentID)
		}
		e.resetOf[o.AgentID] = true
		u := c.unitOf(c.target(o.AgentID))
		if n := len(e.got); n == 0 || e.got[n-1] != u {
			e.got = append(e.got, u)
		}
	}
	if e.want != nil && (len(e.got) > len(e.want) || !slices.Equal(e.got, e.want[:len(e.got)])) {
		c.fatalf("the rollback returned the units %v, want %v in that order", e.got, e.want)
	}
	if c.a.r.Status == rollout.RollingBack {
		return
	}
	if c.a.r.Status == rollout.RolledBack && e.want != nil && !slices.Equal(e.got, e.want) {
		c.fatalf("rolled back the units %v, want %v", e.got, e.want)
	}
	m.rollback = nil
}

func (c modelCheck) unitOf(t rollout.Target) int {
	if len(c.a.r.Stages) > 0 {
		return t.Stage
	}
	return t.Wave
}

// episode is what the rollback that began in this step must return: nil
// units for every started target (a rollback asked for, or onFailure
// rollback), else the failed unit, and with rollback-all the units that
// passed before it, nearest first; units with no started target are left
// out, since there is nothing of them to return.
func (c modelCheck) episode() *episode {
	e := &episode{resetOf: map[string]bool{}}
	mode := c.a.r.Policy.OnFailure
	if c.what == "action rollback" || (mode != policy.OnFailureRollbackWave && mode != policy.OnFailureRollbackAll) {
		return e
	}
	u := c.failedUnit()
	units := []int{u}
	if mode == policy.OnFailureRollbackAll {
		for i := u - 1; i >= 0; i-- {
			if c.unitPassed(i) {
				units = append(units, i)
			}
		}
	}
	e.want = []int{}
	for _, u := range units {
		for _, t := range c.b.ts {
			if u >= 0 && c.unitOf(t) == u && t.Status.Started() {
				e.want = append(e.want, u)
				break
			}
		}
	}
	return e
}

// failedUnit: for a rejection or an expiry, the last unit that ran before
// the wave; else the stage (or wave) that failed in this step.
func (c modelCheck) failedUnit() int {
	for w, wave := range c.a.r.Waves {
		if wave.Rejected == nil || c.b.r.Waves[w].Rejected != nil {
			continue
		}
		last := -1
		if len(c.b.r.Stages) > 0 {
			for s, st := range c.b.r.Stages {
				if st.Wave < w && st.StartedAt != nil {
					last = s
				}
			}
			return last
		}
		for i := 0; i < w; i++ {
			if c.b.r.Waves[i].StartedAt != nil {
				last = i
			}
		}
		return last
	}
	if len(c.a.r.Stages) > 0 {
		for s, st := range c.a.r.Stages {
			if was := c.b.r.Stages[min(s, len(c.b.r.Stages)-1)].Status; st.Status == rollout.StageFailed && was != rollout.StageFailed {
				return s
			}
		}
	}
	for w, wave := range c.a.r.Waves {
		if wave.Status == rollout.WaveFailed && c.b.r.Waves[w].Status != rollout.WaveFailed {
			return w
		}
	}
	return -1
}

// unitPassed: a stage that passed (or bakes, every target final) before
// the step, or without stages a completed wave.
func (c modelCheck) unitPassed(u int) bool {
	if len(c.b.r.Stages) > 0 {
		st := c.b.r.Stages[u].Status
		return st == rollout.StagePassed || st == rollout.StageBaking
	}
	return c.b.r.Waves[u].Status == rollout.WaveCompleted
}

// hadFailed: the target failed, or failed and was rolled back in this
// same step (it keeps the code of its failure).
func (c modelCheck) hadFailed(t rollout.Target) bool {
	if t.Status == rollout.TargetFailed {
		return true
	}
	was, _ := c.before(t.AgentID)
	return t.Status == rollout.TargetRolledBack && t.ReasonCode != "" && was.Status != rollout.TargetRolledBack
}
