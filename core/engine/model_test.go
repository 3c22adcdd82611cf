package engine

import (
	"flag"
	"fmt"
	"reflect"
	"runtime/debug"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
)

// modelChecks is how many random rollouts each model test drives (unless
// -rapid.checks says otherwise): enough to find each defect of meet_test.go
// from scratch when its fix is undone (docs/engine.md, "How the engine is
// tested").
const modelChecks = 10000

// TestModel_Engine drives random rollouts over the whole space of the
// policy (stages by region and zone, parallel regions, batches by number
// and percentage, bakes, batch gates, health gates, approvals between and
// on waves, empty waves, expiries, freezes and overrides, maintenance
// windows) through random events (agent reports, offline agents,
// stragglers joining at any moment, gate readings green or red, failed
// Starts and executor failures, every operator action, supersede, the
// clock), and checks the invariants of the model (model_invariants_test.go)
// after every action and every evaluation.
func TestModel_Engine(t *testing.T) { checkModel(t, space{}) }

// TestModel_Engine_DeepRollouts is the same model in the corner where
// rollbacks by stage matter: always in stages split by region or zone,
// onFailure rollback-wave or rollback-all, several agents. Random rollouts
// of the whole space rarely get three stages deep before one fails.
func TestModel_Engine_DeepRollouts(t *testing.T) { checkModel(t, space{deep: true}) }

// space narrows the policies the model draws.
type space struct{ deep bool }

func checkModel(t *testing.T, sp space) {
	// Each step clones the rollout and evaluates it twice, and keeps
	// little: at the default GOGC the collector took half the CPU of a
	// run (35 CPU-seconds for TestModel_Engine, 15 at 400), which make
	// test pays twice. Only the heap the tests may grow to changes.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
		_ = f.Value.Set(fmt.Sprint(modelChecks))
		defer func() { _ = f.Value.Set("100") }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(t, rt, sp)
		for step, steps := 0, rapid.IntRange(1, 120).Draw(rt, "steps"); step < steps; step++ {
			m.step()
		}
	})
}

// model is a rollout driven as the adapters drive it, with what the
// invariants need to remember across steps.
type model struct {
	rt *rapid.T
	f  *fixture
	// guardedBy lists, per wave index, whether an approval guards it
	// (requireApproval, or approvalsBetween across empty waves).
	rollback *episode // the rollback in progress, if any
	late     int      // stragglers added so far
}

// episode is one rollback: the units it must return, in order, and what
// it returned so far.
type episode struct {
	want    []int // units, in the order they must be reset (nil: every started target)
	got     []int // units of reset orders, in order, consecutive duplicates removed
	resetOf map[string]bool
}

var modelPlaces = [][2]string{{"r1", "r1a"}, {"r1", "r1b"}, {"r2", "r2a"}, {"r2", "r2b"}, {"r3", "r3a"}}

func newModel(t *testing.T, rt *rapid.T, sp space) *model {
	spec := drawSpec(rt, sp)
	p := policy.Policy{Name: "model", Spec: spec}
	if l := policy.Validate(p); l.HasErrors() {
		rt.Skip("invalid policy: ", l.Err())
	}
	snap := p.Snapshot(policy.KindConfig)
	n := rapid.IntRange(1+3*b2i(sp.deep), 10).Draw(rt, "agents")
	f := &fixture{t: t, now: t0, agents: map[string]agent.Agent{}}
	var cands []Candidate
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("a%d", i)
		attrs := drawAttrs(rt, id)
		cands = append(cands, Candidate{AgentID: id, Attributes: selector.Map(attrs), FromRef: "h-old"})
		f.agents[id] = modelAgent(id, attrs)
	}
	r, ts, err := Create(NewRollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Policy: snap, ToRef: "h-new", Candidates: cands, Now: t0, CreatedBy: "user:alice"})
	if err != nil {
		rt.Fatalf("create: %v", err)
	}
	f.r, f.ts = r, ts
	return &model{rt: rt, f: f}
}

func drawAttrs(rt *rapid.T, id string) map[string]string {
	pl := rapid.SampledFrom(modelPlaces).Draw(rt, "place")
	attrs := map[string]string{"cloud.region": pl[0], "cloud.availability_zone": pl[1], "host.name": id + ".example"}
	if rapid.IntRange(0, 3).Draw(rt, "canaryLabel") == 0 {
		attrs["labels.wave"] = "canary"
	}
	return attrs
}

func modelAgent(id string, attrs map[string]string) agent.Agent {
	return agent.Agent{ID: id, Fleet: "edge", Online: true, Attributes: attrs,
		Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Hour)},
		RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
}

// drawSpec draws a policy: waves (a canary, a region, an empty one, the
// rest), each maybe split, baked, batched and gated; the rollout's gate,
// approvals, freezes, windows, threshold and onFailure.
func drawSpec(rt *rapid.T, sp space) policy.Spec {
	staged := sp.deep || rapid.Bool().Draw(rt, "staged")
	splits := []policy.Split{"", policy.SplitZone, policy.SplitRegion}
	onFailure := []policy.OnFailure{"", policy.OnFailurePause, policy.OnFailureRollback, policy.OnFailureRollbackWave, policy.OnFailureRollbackAll}
	if sp.deep {
		splits, onFailure = splits[1:], onFailure[3:]
	}
	var ws []policy.Wave
	add := func(name string, sel map[string]string) {
		w := policy.Wave{Name: name, RequireApproval: rapid.IntRange(0, 5).Draw(rt, name+".requireApproval") == 0}
		if sel != nil {
			w.Selector = &selector.Selector{MatchAttributes: sel}
		} else {
			w.Percent = 100
		}
		if staged {
			w.By = rapid.SampledFrom(splits).Draw(rt, name+".by")
			if w.By != "" {
				w.ParallelRegions = rapid.IntRange(0, 2).Draw(rt, name+".parallelRegions")
			}
			w.Bake = time.Duration(rapid.SampledFrom([]int{0, 60, 180}).Draw(rt, name+".bake")) * time.Second
			w.MaxUnavailable = rapid.SampledFrom([]policy.Amount{{}, {Value: 1}, {Value: 2}, {Value: 50, Percent: true}}).Draw(rt, name+".maxUnavailable")
			if rapid.IntRange(0, 3).Draw(rt, name+".batchGate") == 0 {
				w.BatchGate, w.BatchBake = true, time.Duration(rapid.SampledFrom([]int{0, 30, 60}).Draw(rt, name+".batchBake"))*time.Second
			}
		}
		ws = append(ws, w)
	}
	if rapid.Bool().Draw(rt, "canaryWave") {
		add("canary", map[string]string{"labels.wave": "canary"})
	}
	if rapid.Bool().Draw(rt, "regionWave") {
		add("first", map[string]string{"cloud.region": "r1"})
	}
	if rapid.Bool().Draw(rt, "emptyWave") {
		add("ghost", map[string]string{"cloud.region": "r9"})
	}
	add("all", nil)
	s := policy.Spec{Waves: ws, MaxConcurrent: intp(rapid.IntRange(0, 3).Draw(rt, "maxConcurrent")),
		HealthWait: time.Minute, ApplyTimeout: 10 * time.Minute, OfflineGracePeriod: 5 * time.Minute,
		FailureThreshold: policy.Threshold{MaxFailed: rapid.IntRange(0, 3).Draw(rt, "maxFailed")},
		OnFailure:        rapid.SampledFrom(onFailure).Draw(rt, "onFailure"),
		Approvals:        policy.Approvals{Required: rapid.IntRange(1, 2).Draw(rt, "approvals"), Expiry: time.Duration(rapid.SampledFrom([]int{10, 60}).Draw(rt, "expiry")) * time.Minute},
	}
	for _, w := range ws[:len(ws)-1] {
		if rapid.Bool().Draw(rt, "between."+w.Name) {
			s.ApprovalsBetween = append(s.ApprovalsBetween, w.Name)
		}
	}
	if staged && rapid.Bool().Draw(rt, "health") {
		s.Health = &policy.Health{Interval: 30 * time.Second, FailuresToStop: rapid.IntRange(1, 2).Draw(rt, "failuresToStop"),
			Probes: []policy.Probe{{URL: "http://{host}/healthz"}}}
	}
	if staged && rapid.Bool().Draw(rt, "freeze") {
		from := t0.Add(time.Duration(rapid.IntRange(0, 20).Draw(rt, "freezeFrom")) * time.Minute)
		until := from.Add(time.Duration(rapid.IntRange(1, 30).Draw(rt, "freezeFor")) * time.Minute)
		s.Freezes = []policy.Freeze{{Name: "change-freeze", Regions: []string{rapid.SampledFrom([]string{"r1", "r2"}).Draw(rt, "freezeRegion")}, From: &from, Until: &until}}
	}
	if rapid.IntRange(0, 3).Draw(rt, "windows") == 0 {
		start := windows.TimeOfDay(12*60 + rapid.IntRange(0, 60).Draw(rt, "windowStart"))
		s.MaintenanceWindows = []windows.Window{{Start: start, End: start + windows.TimeOfDay(rapid.IntRange(5, 60).Draw(rt, "windowLength")), Timezone: "UTC"}}
	}
	return s
}

// step is one event, then the evaluation the state machine or the
// agent-event path runs after it.
func (m *model) step() {
	f, rt := m.f, m.rt
	// Time moves between two events, as it does for real: a report never
	// carries the instant of a start that an action of a later step makes.
	f.advance(time.Second)
	switch rapid.IntRange(0, 16).Draw(rt, "event") {
	case 0, 1, 2:
		if id, ok := m.inFlight(); ok {
			f.apply(id)
		}
	case 14, 15, 16:
		m.progress()
	case 3:
		if id, ok := m.inFlight(); ok {
			f.update(id, func(a *agent.Agent) {
				a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
			})
		}
	case 4:
		id := m.anyAgent()
		f.health(id, rapid.Bool().Draw(rt, "healthy"), agent.StatusOK, "")
	case 5:
		f.update(m.anyAgent(), func(a *agent.Agent) { a.Online = !a.Online })
	case 6:
		m.readGates()
	case 7:
		m.act()
	case 8:
		m.straggler()
	case 9:
		m.failStart()
	case 10:
		if rapid.IntRange(0, 9).Draw(rt, "supersede") == 0 {
			m.supersede()
		}
	case 11:
		if d := f.last.NextDeadline; !d.IsZero() {
			f.now = d
		}
	default:
		f.advance(time.Duration(rapid.IntRange(0, 240).Draw(rt, "seconds")) * time.Second)
	}
	m.evaluate()
}

// progress: every target in flight reports success and health, and the
// clock moves to the next deadline, so that rollouts get far: stages pass
// and later ones fail, which the rollbacks by stage need.
func (m *model) progress() {
	f := m.f
	for _, id := range f.inFlightIDs() {
		if f.target(id).Status == rollout.TargetInProgress {
			f.apply(id)
		} else {
			f.health(id, true, agent.StatusOK, "")
		}
	}
	if d := f.last.NextDeadline; !d.IsZero() {
		f.now = d
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (m *model) inFlight() (string, bool) {
	ids := m.f.inFlightIDs()
	if len(ids) == 0 {
		return "", false
	}
	return rapid.SampledFrom(ids).Draw(m.rt, "inFlight"), true
}

func (m *model) anyAgent() string {
	ids := make([]string, 0, len(m.f.ts))
	for _, t := range m.f.ts {
		ids = append(ids, t.AgentID)
	}
	return rapid.SampledFrom(ids).Draw(m.rt, "agent")
}

// evaluate runs a pass as the engine task does, and again while it
// started targets (the task's follow-up evaluates them once more); each
// pass twice on the same input, to show it decides the same. Then a pass
// with nothing to do must change nothing.
func (m *model) evaluate() {
	f := m.f
	for i := 0; i < 4; i++ {
		in := Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now, ExecutorFailures: f.execFailures}
		res := Evaluate(in)
		if again := Evaluate(in); !reflect.DeepEqual(res, again) {
			m.rt.Fatalf("evaluating the same input twice decided differently:\n%+v\n%+v", res, again)
		}
		m.check(res, "evaluate")
		f.execFailures = nil
		if startsIn(res) == 0 {
			break
		}
	}
	if idle := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now}); idle.Changes() || idle.RolloutChanged || !reflect.DeepEqual(idle.Rollout, f.r) {
		m.rt.Fatalf("a second evaluation at the same moment changed something: changed %+v orders %+v events %+v rollout changed %v\nrollout %+v\nwas %+v",
			idle.Changed, idle.Orders, idle.Events, idle.RolloutChanged, idle.Rollout, f.r)
	}
}

// readGates records one reading of every gate due, each green or red
// (red stands for a red value, no data and an error alike).
func (m *model) readGates() {
	f := m.f
	for _, d := range DueGates(f.r, f.now) {
		g := GateState(f.r, d)
		rs := []gate.Result{{Kind: gate.KindProbe, Name: "healthz", Detail: "200"}}
		if rapid.IntRange(0, 3).Draw(m.rt, "red") == 0 { // green mostly, so that stages pass and later ones run
			rs = []gate.Result{{Kind: gate.KindProbe, Name: "healthz", Red: true, Detail: rapid.SampledFrom([]string{"status 503", "no data", "error: timeout"}).Draw(m.rt, "redDetail")}}
		}
		r := f.r
		RecordReading(&r, d, *g.NextAt, f.now, rs)
		f.r = r
	}
}

var modelActors = []string{"user:alice", "user:bob", "user:carol"}

// act applies a random operator action, as the API does: the action, then
// an evaluation (the caller's).
func (m *model) act() {
	f, rt := m.f, m.rt
	req := Request{Action: rapid.SampledFrom(Actions).Draw(rt, "action"), Wave: rapid.IntRange(0, len(f.r.Waves)-1).Draw(rt, "actionWave"),
		Actor: rapid.SampledFrom(modelActors).Draw(rt, "actor"), FreezeOverride: rapid.IntRange(0, 4).Draw(rt, "freezeOverride") == 0}
	res, err := Apply(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now}, req)
	if err != nil {
		return
	}
	m.check(res, "action "+string(req.Action))
}

// straggler adds an agent that became relevant, as the planner does while
// the rollout is active.
func (m *model) straggler() {
	f := m.f
	if !inFlightEvaluated(f.r.Status) { // the statuses the planner adds stragglers to and supersedes
		return
	}
	id := fmt.Sprintf("late%d", m.late)
	m.late++
	attrs := drawAttrs(m.rt, id)
	f.agents[id] = modelAgent(id, attrs)
	r, late := AddStragglers(f.r, []Candidate{{AgentID: id, Attributes: selector.Map(attrs), FromRef: "h-old"}})
	f.r, f.ts = r, append(f.ts, late...)
}

// failStart: the executor failed the Start of a target in progress that
// has not reported (MarkStartFailed), or, for one whose update it
// watches, reports its job failed.
func (m *model) failStart() {
	f := m.f
	var ids []int
	for i, t := range f.ts {
		if t.Status == rollout.TargetInProgress && t.VerifiedAt == nil {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return
	}
	i := rapid.SampledFrom(ids).Draw(m.rt, "failStart")
	if rapid.Bool().Draw(m.rt, "startFailed") {
		f.ts[i] = MarkStartFailed(f.ts[i], f.now, "connection refused")
		return
	}
	f.execFailures = map[string]ExecutorFailure{f.ts[i].AgentID: {ExternalRef: f.ts[i].ExternalRef, Reason: "job failed"}}
}

// supersede ends the rollout as the planner does when its target changes.
func (m *model) supersede() {
	f := m.f
	if !inFlightEvaluated(f.r.Status) { // the statuses the planner adds stragglers to and supersedes
		return
	}
	before := m.snapshot()
	r := cloneRollout(f.r)
	r.Status, r.FinishedAt = rollout.Superseded, timePtr(f.now)
	r.EndPasses(f.ts, f.now)
	r.EndOpenWaves(f.now)
	res := Result{Rollout: r}
	for _, t := range f.ts {
		if t.Status.Open() {
			t.Status, t.FinishedAt = rollout.TargetCancelled, timePtr(f.now)
			res.Changed = append(res.Changed, t)
		}
	}
	m.checkFrom(before, res, "supersede")
}

// state is the rollout and targets before a step.
type state struct {
	r  rollout.Rollout
	ts []rollout.Target
}

func (m *model) snapshot() state {
	return state{r: cloneRollout(m.f.r), ts: append([]rollout.Target(nil), m.f.ts...)}
}

// check stores res as the adapter does and checks the invariants between
// the state before it and after it.
func (m *model) check(res Result, what string) { m.checkFrom(m.snapshot(), res, what) }

func (m *model) checkFrom(before state, res Result, what string) {
	f := m.f
	f.store(res)
	for i := range f.ts { // the executor's reference of a started update, as the adapter stores it
		if t := &f.ts[i]; t.Status == rollout.TargetInProgress && t.ExternalRef == "" {
			t.ExternalRef = fmt.Sprintf("job-%s-%d", t.AgentID, t.Attempt)
		}
	}
	c := modelCheck{m: m, what: what, b: before, r: res, a: state{r: f.r, ts: f.ts}, now: f.now}
	c.deadline()
	c.gates()
	c.approvals()
	c.completion()
	c.inFlight()
	c.freezesAndWindows()
	m.rollbacks(c)
	c.outcomes()
}
