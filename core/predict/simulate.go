package predict

import (
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/route"
)

// Limits of one simulation: it stops, incomplete, after MaxSteps
// evaluations or when its virtual clock passes MaxVirtual after its start.
const (
	MaxSteps   = 100_000
	MaxVirtual = 400 * 24 * time.Hour
)

// run is one simulation of a rollout: the real engine's passes on a
// virtual clock, scheduled as the real loop schedules them, with the
// agents doing what the orders ask. Passes happen when
//   - an agent reports (the agent-event path evaluates the rollout at
//     once): an agent started at t reports the change, healthy, at t + the
//     apply time;
//   - the state machine wakes: after each of its passes it sleeps as
//     route.Decide says, until the engine's next deadline but at most
//     ApplyCap while targets apply, LostEventCap while others are in their
//     health wait, IdleCap otherwise. So a health wait shorter than ApplyCap
//     ends when the state machine next looks, not at its deadline, as it
//     does on the stack.
//
// Each pass evaluates the rollout (engine.Evaluate), keeps what changed,
// records the starts it ordered and the waves and stages it began and
// finished; a gate that is due is read green and a wave that waits for
// approval is approved (engine.Apply), each followed by a pass at the same
// moment, as the state machine's reading task and an approval's wake-up do.
//
// It ends when the rollout completes, when it stops in a status that waits
// for a person (paused, failed), when nothing more would happen, or at the
// limits.
type run struct {
	r      rollout.Rollout
	ts     []rollout.Target
	at     map[string]int // agent id → index in ts
	agents map[string]agent.Agent
	tz     string
	apply  time.Duration
	clock  clock
	begin  time.Time
	// evaluation is how long each pass takes before what it decides takes
	// effect (0 for the median run): the pass due at t evaluates at
	// t + evaluation, so that the delays add up along the rollout as the
	// real passes' do.
	evaluation time.Duration

	queue []report // due in nondecreasing order: every start waits the same apply time
	head  int
	done  int   // waves final when ts was last compacted
	feed  *feed // the targets each pass gets (feed.go)
	// flyBuf is the buffer of flying, which the state machine's verdict reads.
	flyBuf []rollout.Target

	out trace
}

type report struct {
	agentID string
	due     time.Time
}

// trace is what a run observed.
type trace struct {
	start     *When // the first target's start
	finish    *When
	waves     []span
	stages    []span
	approvals []Approval
	complete  bool
	reason    string // why the run did not complete
	steps     int
	passes    int // evaluations of the rollout (engine.Evaluate)
}

// span is when a wave or stage began (the engine opened it), when its
// first target started, and when it ended (completed, skipped, passed).
type span struct {
	began, first, end *When
}

// start is the first target's start, else the moment it began.
func (s span) start() *When {
	if s.first != nil {
		return s.first
	}
	return s.began
}

// newRun prepares a simulation of r from now: agents holds the agents of
// the open targets, their Online as the liveness rule judges them now (the
// engine of the run trusts Online).
func newRun(r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent, now time.Time, tz string, apply time.Duration) *run {
	s := &run{r: r, ts: slices.Clone(ts), agents: make(map[string]agent.Agent, len(agents)), tz: tz, apply: apply,
		clock: newClock(now), begin: now}
	for id, a := range agents {
		s.agents[id] = a
	}
	s.out.waves = make([]span, len(r.Waves))
	s.out.stages = make([]span, len(r.Stages))
	s.observePast()
	s.inFlight()
	s.feed = newFeed(r, s.ts, s.agents, tz)
	s.compact()
	return s
}

// observePast records what happened before the run: the stored starts and
// ends of waves and stages, and the first start of each.
func (s *run) observePast() {
	for w, wave := range s.r.Waves {
		s.out.waves[w].began = whenPtr(wave.StartedAt)
		if wave.Status == rollout.WaveCompleted || wave.Status == rollout.WaveSkipped {
			s.out.waves[w].end = whenPtr(wave.FinishedAt)
		}
	}
	for i, st := range s.r.Stages {
		s.out.stages[i].began = whenPtr(st.StartedAt)
		if st.Status == rollout.StagePassed {
			end := st.FinishedAt
			if st.BakeUntil != nil {
				end = st.BakeUntil
			}
			s.out.stages[i].end = whenPtr(end)
		}
	}
	var first *time.Time
	for _, t := range s.ts {
		if t.StartedAt == nil {
			continue
		}
		if first == nil || t.StartedAt.Before(*first) {
			first = t.StartedAt
		}
		s.earliest(&s.out.waves[t.Wave].first, *t.StartedAt)
		if t.Stage < len(s.out.stages) && len(s.r.Stages) > 0 {
			s.earliest(&s.out.stages[t.Stage].first, *t.StartedAt)
		}
	}
	s.out.start = whenPtr(first)
}

// earliest keeps the earlier of *w and t (both before the run's clock
// began: instants).
func (s *run) earliest(w **When, t time.Time) {
	if *w == nil || (*w).At.After(t) {
		v := At(t)
		*w = &v
	}
}

func whenPtr(t *time.Time) *When {
	if t == nil {
		return nil
	}
	w := At(*t)
	return &w
}

// inFlight makes the targets in flight finish as the run assumes: one in
// progress reports the change an apply time after its start (now, when
// that has passed), unless its agent reports it already; the agent of one
// in its health wait stays healthy.
func (s *run) inFlight() {
	now := s.clock.now
	for _, t := range s.ts {
		switch t.Status {
		case rollout.TargetInProgress:
			if a, ok := s.agents[t.AgentID]; ok && reports(s.r.Kind, t, a) {
				// It applied the change and restarts: the run assumes the
				// new process comes up healthy, as for a target verifying.
				s.agents[t.AgentID] = healthyAfter(a, t)
				continue
			}
			due := t.StartedAt.Add(s.apply)
			if due.Before(now) {
				due = now
			}
			s.queue = append(s.queue, report{agentID: t.AgentID, due: due})
		case rollout.TargetVerifying:
			a, ok := s.agents[t.AgentID]
			if !ok {
				continue
			}
			s.agents[t.AgentID] = healthyAfter(a, t)
		}
	}
	slices.SortStableFunc(s.queue, func(a, b report) int { return a.due.Compare(b.due) })
}

// healthyAfter is agent a healthy from its last report on, a report of
// the process that runs target t's change.
func healthyAfter(a agent.Agent, t rollout.Target) agent.Agent {
	at := a.Health.ReportedAt
	if t.ReportedAt != nil && at.Before(*t.ReportedAt) {
		at = *t.ReportedAt // a report of the new process
	}
	a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: a.Health.StartTime, ReportedAt: at}
	return a
}

// reports says whether agent a reports target t's change already.
func reports(k policy.Kind, t rollout.Target, a agent.Agent) bool {
	if k == policy.KindVersion {
		return a.ServiceVersion == t.ToRef
	}
	return a.RemoteConfig.Hash == t.ToRef && a.RemoteConfig.Status == agent.ConfigApplied
}

// simulate runs the passes until the rollout ends or the run stops.
func (s *run) simulate() trace {
	wake := s.clock.now // the state machine's next pass: one at the start
	for s.out.steps = 0; ; s.out.steps++ {
		if s.out.steps >= MaxSteps {
			return s.stop(fmt.Sprintf("the simulation stopped after %d steps", MaxSteps))
		}
		// The pass due now evaluates once its own time is over (the
		// pessimistic run's), with the reports that came in meanwhile.
		s.clock.now = s.clock.now.Add(s.evaluation)
		s.deliver()
		res := s.pass()
		if len(res.GatesDue) > 0 {
			s.readGreen(res.GatesDue)
			wake = s.clock.now // the state machine reads the gates, then evaluates
			continue
		}
		switch s.r.Status {
		case rollout.Completed:
			s.out.finish, s.out.complete = ptr(s.clock.when(s.clock.now)), true
			return s.out
		case rollout.WaitingApproval:
			if !s.approve() {
				return s.out
			}
			wake = s.clock.now // the approval wakes the state machine
			continue
		case rollout.Running, rollout.Pending, rollout.Frozen:
		default:
			return s.stop(fmt.Sprintf("the rollout would become %s: %s", s.r.Status, s.r.StatusReason))
		}
		if !s.clock.now.Before(wake) {
			if s.idle() && res.NextDeadline.IsZero() && !res.Changes() {
				return s.stop("nothing more would happen without a person or an agent")
			}
			wake = s.sleep(res)
		}
		next := s.next(wake)
		switch {
		case !next.After(s.clock.now):
			return s.stop("nothing more would happen without a person or an agent")
		case next.Sub(s.begin) > MaxVirtual:
			return s.stop(fmt.Sprintf("the rollout would not end within %d days", MaxVirtual/(24*time.Hour)))
		}
		s.clock.now = next
	}
}

// pass evaluates the rollout now and keeps the result. A pass over the
// feed that fails a target is evaluated again over every target (feed.go).
func (s *run) pass() engine.Result {
	s.out.passes++
	res := engine.Evaluate(s.input())
	if s.feed.on && failedAny(res.Changed) {
		s.feed.on = false // the threshold counts every target of the wave from now on
		s.compact()
		res = engine.Evaluate(s.input())
	}
	s.absorb(res)
	return res
}

// sleep is when the state machine, after its evaluation res, evaluates
// again: at the end of its Wait, or of its park for an approval or a freeze.
func (s *run) sleep(res engine.Result) time.Time {
	now := s.clock.now
	d := route.Decide(route.Input{Rollout: res.Rollout, Targets: s.flying(), GatesDue: len(res.GatesDue) > 0,
		NextDeadline: res.NextDeadline}, now)
	if d.WaitUntil.IsZero() {
		return now.Add(time.Duration(d.ParkSeconds) * time.Second)
	}
	return d.WaitUntil
}

// flying are the targets in flight, which are all the state machine's
// verdict counts to decide how long it sleeps.
func (s *run) flying() []rollout.Target {
	s.flyBuf = s.flyBuf[:0]
	add := func(t rollout.Target) {
		if t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying {
			s.flyBuf = append(s.flyBuf, t)
		}
	}
	if !s.feed.on {
		for _, t := range s.ts {
			add(t)
		}
		return s.flyBuf
	}
	for _, i := range s.feed.flying {
		add(s.ts[i])
	}
	return s.flyBuf
}

// idle: no agent report is on its way.
func (s *run) idle() bool { return s.head >= len(s.queue) }

func ptr[T any](v T) *T { return &v }

func (s *run) input() engine.Input {
	ts := s.ts
	if s.feed.on {
		ts = s.feed.targets(s.ts)
	}
	return engine.Input{Rollout: s.r, Targets: ts, Agents: s.agents, Now: s.clock.now, ServerTimezone: s.tz}
}

func failedAny(ts []rollout.Target) bool {
	for _, t := range ts {
		if t.Status == rollout.TargetFailed {
			return true
		}
	}
	return false
}

func (s *run) stop(reason string) trace {
	s.out.reason = reason
	return s.out
}

// next is the earlier of the state machine's wake and the next report.
func (s *run) next(wake time.Time) time.Time {
	if !s.idle() {
		if due := s.queue[s.head].due; wake.IsZero() || due.Before(wake) {
			return due
		}
	}
	return wake
}

// deliver makes the agents whose reports are due report the change,
// healthy, at the moment they were due.
func (s *run) deliver() {
	for ; s.head < len(s.queue) && !s.queue[s.head].due.After(s.clock.now); s.head++ {
		rep := s.queue[s.head]
		i, ok := s.at[rep.agentID]
		a, known := s.agents[rep.agentID]
		if !ok || !known {
			continue // a deleted agent reports nothing
		}
		to := s.ts[i].ToRef
		a.Online = true
		a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: rep.due, ReportedAt: rep.due}
		if s.r.Kind == policy.KindVersion {
			a.ServiceVersion, a.VersionSince = to, rep.due
		} else {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: to, Status: agent.ConfigApplied, Since: rep.due}
			a.DesiredHash = to
		}
		s.agents[rep.agentID] = a
	}
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	}
}

// absorb keeps the result of a pass or an action: the rollout, the changed
// targets, the starts it ordered and the waves and stages that moved.
func (s *run) absorb(res engine.Result) {
	prev := s.r
	s.r = res.Rollout
	for _, c := range res.Changed {
		if i, ok := s.at[c.AgentID]; ok {
			s.ts[i] = c
		}
	}
	for _, o := range res.Orders {
		if o.Kind == engine.OrderStart {
			s.started(o.AgentID)
		}
	}
	s.observe(prev)
	s.compact()
}

// started records a start and queues the agent's report.
func (s *run) started(id string) {
	i, ok := s.at[id]
	if !ok {
		return
	}
	t, now := s.ts[i], s.clock.now
	if s.feed.on {
		s.feed.started(i)
	}
	w := s.clock.when(now)
	if s.out.start == nil {
		s.out.start = &w
	}
	if sp := &s.out.waves[t.Wave]; sp.first == nil {
		sp.first = &w
	}
	if len(s.r.Stages) > 0 && t.Stage < len(s.out.stages) {
		if sp := &s.out.stages[t.Stage]; sp.first == nil {
			sp.first = &w
		}
	}
	s.queue = append(s.queue, report{agentID: id, due: now.Add(s.apply)})
}

// observe records the waves and stages that began or ended in the pass.
func (s *run) observe(prev rollout.Rollout) {
	w := s.clock.when(s.clock.now)
	for i, wave := range s.r.Waves {
		sp := &s.out.waves[i]
		if sp.began == nil && wave.StartedAt != nil {
			sp.began = &w
		}
		if sp.end == nil && (wave.Status == rollout.WaveCompleted || wave.Status == rollout.WaveSkipped) {
			sp.end = &w
			if sp.began == nil {
				sp.began = &w // skipped: it had no targets
			}
		}
	}
	for i, st := range s.r.Stages {
		sp := &s.out.stages[i]
		if sp.began == nil && st.StartedAt != nil {
			sp.began = &w
		}
		if sp.end == nil && st.Status == rollout.StagePassed && (i >= len(prev.Stages) || prev.Stages[i].Status != rollout.StagePassed) {
			sp.end = &w
		}
	}
}

// compact drops the targets of waves that completed or were skipped: no
// pass reads them again (the walk of the waves passes over such waves, and
// their targets are final), and a pass costs time in proportion to the
// targets it gets. While the feed serves, it leaves finished targets out
// itself, and ts keeps its order for it.
func (s *run) compact() {
	if s.feed.on {
		if s.at == nil {
			s.index()
		}
		return
	}
	done := 0
	for _, w := range s.r.Waves {
		if w.Status == rollout.WaveCompleted || w.Status == rollout.WaveSkipped {
			done++
		}
	}
	if done == s.done && s.at != nil {
		return
	}
	s.done = done
	kept := s.ts[:0]
	for _, t := range s.ts {
		if st := s.r.Waves[t.Wave].Status; st != rollout.WaveCompleted && st != rollout.WaveSkipped {
			kept = append(kept, t)
		}
	}
	s.ts = kept
	s.index()
}

func (s *run) index() {
	s.at = make(map[string]int, len(s.ts))
	for i, t := range s.ts {
		s.at[t.AgentID] = i
	}
}

// readGreen records a green reading of every gate that is due.
func (s *run) readGreen(due []engine.GateDue) {
	for _, d := range due {
		if g := engine.GateState(s.r, d); g != nil && g.NextAt != nil {
			engine.RecordReading(&s.r, d, *g.NextAt, s.clock.now, nil)
		}
	}
}

// approve records the approval the rollout waits for and gives it at once
// (as many distinct approvals as the policy asks for); the moments after
// it count from it. It reports false when the engine refused.
func (s *run) approve() bool {
	for w, wave := range s.r.Waves {
		if wave.Status != rollout.WaveWaitingApproval || wave.Approved {
			continue
		}
		since := s.clock.now
		if wave.WaitingSince != nil && s.clock.anchor < 0 {
			since = *wave.WaitingSince
		}
		s.out.approvals = append(s.out.approvals, Approval{Wave: w, Name: wave.Name, RequestedAt: s.clock.when(since)})
		for k := len(wave.Approvals); k < max(s.r.Policy.Approvals.Required, 1); k++ {
			res, err := engine.Apply(s.input(), engine.Request{Action: engine.ActionApprove, Wave: w, Actor: "the prediction",
				ActorID: fmt.Sprintf("prediction:%d", k+1)})
			if err != nil {
				s.stop(fmt.Sprintf("the simulated approval of wave %d was refused: %v", w, err))
				return false
			}
			s.absorb(res)
		}
		s.clock.approved(w)
		return true
	}
	s.stop("the rollout waits for an approval of no wave")
	return false
}
