package engine

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// t0 is a Monday, noon UTC.
var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fixture is a rollout with its targets and agents that a test drives pass
// by pass on a fake clock, storing what each pass changed like an adapter.
type fixture struct {
	t      *testing.T
	r      rollout.Rollout
	ts     []rollout.Target
	agents map[string]agent.Agent
	now    time.Time
	last   Result
	live   agent.Liveness // the liveness rule of the passes; zero trusts Online
	// execFailures are what a watching executor reports to the passes.
	execFailures map[string]ExecutorFailure
	orders       []Order
	events       []string
	lazyRead     int // agents read by the passes that read them when asked (sameReadingAsked)
	lazyRounds   int // the rounds of the last such pass
}

// newFixture builds a rollout of kind k with snapshot s; waves lists the agent
// ids of each wave. Agents start online, healthy and on the from state.
func newFixture(t *testing.T, k policy.Kind, s policy.Snapshot, waves ...[]string) *fixture {
	t.Helper()
	f := &fixture{t: t, now: t0, agents: map[string]agent.Agent{}}
	f.r = rollout.Rollout{ID: "r1", Fleet: "edge", Kind: k, Status: rollout.Pending, Policy: s, CreatedAt: t0}
	for w, ids := range waves {
		wave := rollout.Wave{Index: w, Name: fmt.Sprintf("wave%d", w), Status: rollout.WavePending}
		if w < len(s.Waves) {
			wave.Name, wave.RequireApproval = s.Waves[w].Name, s.Waves[w].RequireApproval
		}
		if len(ids) == 0 {
			wave.Status = rollout.WaveSkipped
		}
		f.r.Waves = append(f.r.Waves, wave)
		for _, id := range ids {
			from, to := "h-old", "h-new"
			if k == policy.KindVersion {
				from, to = "0.160.0", "0.161.0"
			}
			f.ts = append(f.ts, rollout.Target{RolloutID: "r1", AgentID: id, Wave: w, Status: rollout.TargetPending, Attempt: 1, FromRef: from, ToRef: to})
			a := agent.Agent{ID: id, Fleet: "edge", Online: true, ServiceVersion: "0.160.0",
				Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Hour)},
				RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
			f.agents[id] = a
		}
	}
	return f
}

// snap is a config snapshot with the given tweaks applied to the defaults.
func snap(k policy.Kind, tweak func(*policy.Spec)) policy.Snapshot {
	p := policy.Policy{Name: "test"}
	if tweak != nil {
		tweak(&p.Spec)
	}
	return p.Snapshot(k)
}

func intp(n int) *int { return &n }

// tick runs one pass at the fixture's time and stores what it changed.
// Every pass is also decided as an adapter that reads agents only when
// asked decides it (sameReadingAsked), and must come out the same.
func (f *fixture) tick() Result {
	f.t.Helper()
	in := Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now, Liveness: f.live, ExecutorFailures: f.execFailures}
	res := Evaluate(in)
	f.sameReadingAsked(in, res, func(in Input) (Result, error) { return Evaluate(in), nil })
	f.store(res)
	return res
}

func (f *fixture) act(req Request) error {
	f.t.Helper()
	in := Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now}
	res, err := Apply(in, req)
	if err == nil {
		f.sameReadingAsked(in, res, func(in Input) (Result, error) { return Apply(in, req) })
		f.store(res)
	}
	return err
}

// sameReadingAsked decides in again with no agent read at first (Input.Read),
// then, round after round, with the agents the last round listed missing
// read as well, until none is missing: the result must be want, the
// decision over every agent. A round that lists an agent read before, or
// more rounds than targets, fails the test.
func (f *fixture) sameReadingAsked(in Input, want Result, decide func(Input) (Result, error)) {
	f.t.Helper()
	read := map[string]bool{}
	for round := 0; round <= len(in.Targets)+1; round++ {
		part := in
		part.Read, part.Agents = maps.Clone(read), map[string]agent.Agent{}
		for id := range read {
			if a, ok := in.Agents[id]; ok {
				part.Agents[id] = a
			}
		}
		got, err := decide(part)
		if err != nil {
			f.t.Fatalf("round %d reading agents when asked: %v", round, err)
		}
		if len(got.Missing) == 0 {
			if !reflect.DeepEqual(got, want) {
				f.t.Fatalf("reading %d of %d agents when asked decided otherwise than reading all:\n got %+v\nwant %+v", len(read), len(in.Agents), got, want)
			}
			f.lazyRead += len(read)
			f.lazyRounds = round + 1
			return
		}
		for _, id := range got.Missing {
			if read[id] {
				f.t.Fatalf("round %d lists agent %s missing, read in an earlier round", round, id)
			}
			read[id] = true
		}
	}
	f.t.Fatalf("reading agents when asked took more rounds than there are targets")
}

// carryOut does to the agents what the evaluator's orders do to a
// configuration: a start or a reset sets the desired hash.
func (f *fixture) carryOut(res Result) {
	if f.r.Kind != policy.KindConfig {
		return
	}
	for _, o := range res.Orders {
		if a, ok := f.agents[o.AgentID]; ok && o.Kind != OrderCancel {
			a.DesiredHash = o.Ref
			f.agents[o.AgentID] = a
		}
	}
}

func (f *fixture) store(res Result) {
	f.last = res
	f.r = res.Rollout
	for _, c := range res.Changed {
		for i := range f.ts {
			if f.ts[i].AgentID == c.AgentID {
				f.ts[i] = c
			}
		}
	}
	f.orders = append(f.orders, res.Orders...)
	f.carryOut(res)
	for _, e := range res.Events {
		f.events = append(f.events, e.Type)
	}
}

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d) }

func (f *fixture) target(id string) rollout.Target {
	for _, t := range f.ts {
		if t.AgentID == id {
			return t
		}
	}
	f.t.Fatalf("no target %s", id)
	return rollout.Target{}
}

func (f *fixture) update(id string, fn func(*agent.Agent)) {
	a := f.agents[id]
	fn(&a)
	f.agents[id] = a
}

// apply makes the agent report success now: APPLIED for the target hash, or
// the target version (a version update restarts the collector, whose first
// report is healthy=false with no status, as the real supervisor sends it).
func (f *fixture) apply(id string) {
	t := f.target(id)
	f.update(id, func(a *agent.Agent) {
		if f.r.Kind == policy.KindVersion {
			a.ServiceVersion, a.VersionSince = t.ToRef, f.now
			a.Health = agent.Health{Healthy: false, ReportedAt: f.now}
			return
		}
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: t.ToRef, Status: agent.ConfigApplied, Since: f.now}
	})
}

func (f *fixture) health(id string, healthy bool, status, lastErr string) {
	f.update(id, func(a *agent.Agent) {
		a.Health = agent.Health{Healthy: healthy, Status: status, LastError: lastErr, ReportedAt: f.now}
	})
}

func (f *fixture) wantTarget(id string, want rollout.TargetStatus) {
	f.t.Helper()
	if got := f.target(id); got.Status != want {
		f.t.Fatalf("target %s at +%s: status %s (%s %s), want %s", id, f.now.Sub(t0), got.Status, got.ReasonCode, got.Reason, want)
	}
}

func (f *fixture) wantRollout(want rollout.Status) {
	f.t.Helper()
	if f.r.Status != want {
		f.t.Fatalf("rollout at +%s: status %s (%s), want %s", f.now.Sub(t0), f.r.Status, f.r.StatusReason, want)
	}
}

func (f *fixture) wantWave(w int, want rollout.WaveStatus) {
	f.t.Helper()
	if got := f.r.Waves[w].Status; got != want {
		f.t.Fatalf("wave %d at +%s: status %s, want %s", w, f.now.Sub(t0), got, want)
	}
}

func (f *fixture) wantDeadline(want time.Time) {
	f.t.Helper()
	if !f.last.NextDeadline.Equal(want) {
		f.t.Fatalf("next deadline %s, want %s", f.last.NextDeadline.Sub(t0), want.Sub(t0))
	}
}

func (f *fixture) startedOrders() int {
	n := 0
	for _, o := range f.orders {
		if o.Kind == OrderStart {
			n++
		}
	}
	return n
}
