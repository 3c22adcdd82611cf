package agentevent

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func base() agent.Agent {
	return agent.Agent{ID: "a1", Fleet: "edge", Online: true, LastSeen: t0, Health: agent.Health{Healthy: true, ReportedAt: t0}}
}

func TestMatters(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*agent.Agent)
		want bool
	}{
		{name: "heartbeat moves lastSeen only", mut: func(a *agent.Agent) { a.LastSeen = t0.Add(time.Minute) }, want: false},
		{name: "health report", mut: func(a *agent.Agent) { a.Health.Healthy = false }, want: true},
		{name: "config applied", mut: func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigApplied }, want: true},
		{name: "new version", mut: func(a *agent.Agent) { a.ServiceVersion = "0.161.0" }, want: true},
		{name: "went offline", mut: func(a *agent.Agent) { a.Online = false }, want: true},
		{name: "moved fleet", mut: func(a *agent.Agent) { a.Fleet = "core" }, want: true},
		{name: "an evaluation set its desired hash", mut: func(a *agent.Agent) { a.DesiredHash = "h2" }, want: false},
		{name: "the planner set its target version", mut: func(a *agent.Agent) { a.TargetVersion = "0.162.0" }, want: false},
		{name: "the updater executor offered a package", mut: func(a *agent.Agent) { a.PackageOffer = "0.162.0" }, want: false},
		{name: "a new effective configuration", mut: func(a *agent.Agent) { a.EffectiveHash = "e2" }, want: false},
		{name: "desired hash and an APPLIED report together", mut: func(a *agent.Agent) {
			a.DesiredHash, a.RemoteConfig.Status = "h2", agent.ConfigApplied
		}, want: true},
	}
	for _, c := range cases {
		old, nw := base(), base()
		c.mut(&nw)
		if got := Matters(Between(&old, &nw)); got != c.want {
			t.Errorf("%s: Matters = %v, want %v", c.name, got, c.want)
		}
	}
	a := base()
	if !Matters(Between(nil, &a)) || !Matters(Between(&a, nil)) {
		t.Error("a new or a deleted agent always matters")
	}
}

type fakeRollouts map[string]string // fleet#kind -> id

func (f fakeRollouts) ActiveRolloutID(_ context.Context, fleet string, k policy.Kind) (string, error) {
	if fleet == "broken" {
		return "", errors.New("throttled")
	}
	return f[fleet+"#"+string(k)], nil
}

// countingEvaluator records the agents of every evaluation, by rollout.
type countingEvaluator map[string][][]string

func (c countingEvaluator) EvaluateAgents(_ context.Context, id string, agentIDs []string, _ map[string]agent.Agent) error {
	c[id] = append(c[id], agentIDs)
	return nil
}

func TestHandle_EvaluatesEachActiveRolloutOnce(t *testing.T) {
	evaluations := countingEvaluator{}
	h := Handler{Rollouts: fakeRollouts{"edge#config": "r-cfg", "edge#version": "r-ver", "core#config": "r-core"}, Evaluator: evaluations}
	o1, n1 := base(), base()
	n1.Health.Healthy = false
	o2, n2 := base(), base()
	o2.ID, n2.ID = "a2", "a2"
	n2.RemoteConfig.Status = agent.ConfigApplied
	o3, n3 := base(), base()
	n3.LastSeen = t0.Add(time.Minute) // a heartbeat: nothing to evaluate
	o3.Fleet, n3.Fleet = "idle", "idle"
	o4, n4 := base(), base()
	n4.Fleet = "core" // moved: both fleets
	err := h.Handle(context.Background(), []Change{Between(&o1, &n1), Between(&o2, &n2), Between(&o3, &n3), Between(&o4, &n4)})
	if err != nil {
		t.Fatal(err)
	}
	// one evaluation per rollout, over the batch's agents of its fleet (a1 moved
	// from edge to core: both), each once; the heartbeat's agent in none
	want := countingEvaluator{"r-cfg": {{"a1", "a2"}}, "r-ver": {{"a1", "a2"}}, "r-core": {{"a1"}}}
	if !reflect.DeepEqual(evaluations, want) {
		t.Fatalf("evaluations %v, want %v", evaluations, want)
	}
}

// imagesEvaluator records the images handed to each evaluation.
type imagesEvaluator []map[string]agent.Agent

func (p *imagesEvaluator) EvaluateAgents(_ context.Context, _ string, _ []string, images map[string]agent.Agent) error {
	*p = append(*p, images)
	return nil
}

// An evaluation gets the newest image of each agent of the batch, also when that
// change alone would not matter (a1's heartbeat after its report carries
// the report too), and none for an agent the batch deleted.
func TestHandle_PassesTheNewestImageOfEachAgent(t *testing.T) {
	var evaluations imagesEvaluator
	h := Handler{Rollouts: fakeRollouts{"edge#config": "r-cfg"}, Evaluator: &evaluations}
	o1, report, beat := base(), base(), base()
	report.RemoteConfig.Status = agent.ConfigApplied
	beat.RemoteConfig.Status, beat.LastSeen = agent.ConfigApplied, t0.Add(time.Minute)
	o2, n2 := base(), base()
	o2.ID, n2.ID = "a2", "a2"
	n2.Health.Healthy = false
	gone := n2
	err := h.Handle(context.Background(), []Change{Between(&o1, &report), Between(&o2, &n2), Between(&report, &beat), Between(&gone, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if len(evaluations) != 1 {
		t.Fatalf("%d evaluations, want one", len(evaluations))
	}
	got := evaluations[0]
	if a, ok := got["a1"]; !ok || !a.LastSeen.Equal(beat.LastSeen) {
		t.Fatalf("image of a1 %+v, want the heartbeat's (the newest)", a)
	}
	if _, ok := got["a2"]; ok || len(got) != 1 {
		t.Fatalf("images %v, want a1's alone (a2 was deleted)", got)
	}
}

func TestHandle_ErrorsRedeliverTheBatch(t *testing.T) {
	h := Handler{Rollouts: fakeRollouts{}, Evaluator: countingEvaluator{}}
	a, b := base(), base()
	a.Fleet, b.Fleet, b.Online = "broken", "broken", false
	if err := h.Handle(context.Background(), []Change{Between(&a, &b)}); err == nil {
		t.Fatal("a failed lookup must fail the batch so that the stream delivers it again")
	}
}

type recordingAssigner struct {
	ids     []string
	touched []string
}

func (r *recordingAssigner) Assign(_ context.Context, ids []string) ([]string, error) {
	r.ids = append(r.ids, ids...)
	return r.touched, nil
}

type recordingPlanner []string

func (p *recordingPlanner) PlanFleet(_ context.Context, fleet string, k policy.Kind) (plannertask.Reply, error) {
	*p = append(*p, fleet+"#"+string(k))
	return plannertask.Reply{}, nil
}

// New agents and agents whose attributes changed are assigned; the fleets
// the assignment touched are planned, each kind once per batch; a health
// report or a heartbeat assigns nothing.
func TestHandle_AssignsNewAndRelabelledAgentsAndPlansTheirFleets(t *testing.T) {
	as := &recordingAssigner{touched: []string{"edge", "lab"}}
	var plans recordingPlanner
	h := Handler{Rollouts: fakeRollouts{}, Evaluator: countingEvaluator{}, Assigner: as, Planner: &plans}
	fresh := base()
	fresh.ID = "new"
	oldL, newL := base(), base()
	oldL.ID, newL.ID = "moved", "moved"
	newL.Attributes = map[string]string{"labels.fleet": "lab"}
	oldH, newH := base(), base()
	oldH.ID, newH.ID = "health", "health"
	newH.Health.Healthy = false
	if err := h.Handle(context.Background(), []Change{Between(nil, &fresh), Between(&oldL, &newL), Between(&oldH, &newH)}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(as.ids, ",") != "new,moved" {
		t.Fatalf("assigned %v, want the new and the relabelled agent", as.ids)
	}
	if got := strings.Join(plans, ","); got != "edge#config,edge#version,lab#config,lab#version" {
		t.Fatalf("planned %s, want both kinds of the touched fleets", got)
	}
}

type collectorsOf map[string]agent.Agent

func (c collectorsOf) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	a, ok := c[id]
	return a, ok, nil
}

// A myriarch-updater is in no fleet: its report runs the evaluations of the
// fleet of the collector it serves, over that collector. An updater whose
// collector is unknown runs none; its heartbeat runs none.
func TestHandle_UpdaterReportsPassTheirCollector(t *testing.T) {
	const col = "018f3a10-2233-7444-8555-000000000001"
	evaluations := countingEvaluator{}
	h := Handler{Rollouts: fakeRollouts{"edge#version": "r-ver"}, Evaluator: evaluations,
		Collectors: collectorsOf{col: {ID: col, Fleet: "edge"}}}
	updater := func(id, collector string) agent.Agent {
		a := base()
		a.ID, a.Fleet = id, ""
		a.Attributes = map[string]string{agent.AttrLinkedCollector: collector}
		return a
	}
	o, n := updater("u1", col), updater("u1", col)
	n.Update = &agent.UpdateComponent{Status: "verifying"}
	lost, lostNew := updater("u2", "018f3a10-2233-7444-8555-000000000009"), updater("u2", "018f3a10-2233-7444-8555-000000000009")
	lostNew.Update = &agent.UpdateComponent{Status: "downloading"}
	beat, beatNew := updater("u3", col), updater("u3", col)
	beatNew.LastSeen = t0.Add(time.Minute)
	if err := h.Handle(context.Background(), []Change{Between(&o, &n), Between(&lost, &lostNew), Between(&beat, &beatNew)}); err != nil {
		t.Fatal(err)
	}
	if want := (countingEvaluator{"r-ver": {{col}}}); !reflect.DeepEqual(evaluations, want) {
		t.Fatalf("evaluations %v, want %v", evaluations, want)
	}
}
