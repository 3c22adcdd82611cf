package planner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
	"github.com/myriarch/myriarch/local/store/memstore"
)

func newPlanner(m *memstore.Store) planner.Planner {
	n := 0
	return planner.Planner{Store: m, Clock: func() time.Time { return planner.T0 }, NewID: func() string { n++; return fmt.Sprintf("r%d", n) }}
}

func seeded() *memstore.Store {
	m := memstore.New()
	m.FleetsByName["edge"] = *planner.EdgeFleet()
	m.Revision = &revision.Pointer{Commit: "c9", Version: 1}
	m.PoliciesByName["cfg"] = policy.Policy{Name: "cfg"}
	m.PoliciesByName["ver"] = policy.Policy{Name: "ver"}
	for _, a := range planner.Agents(3) {
		m.Agents[a.ID] = a
	}
	return m
}

// changeFleet changes a stored fleet, as a new commit would.
func changeFleet(m *memstore.Store, name string, change func(*fleet.Fleet)) {
	m.Lock()
	defer m.Unlock()
	f := m.FleetsByName[name]
	change(&f)
	m.FleetsByName[name] = f
}

func TestRun_CreateThenSupersedeOnNewCommit(t *testing.T) {
	ctx := context.Background()
	m := seeded()
	p := newPlanner(m)
	d, err := p.Run(ctx, "edge", policy.KindConfig)
	if err != nil || d.Created == nil {
		t.Fatalf("first run: %v %+v", err, d)
	}
	if d, _ := p.Run(ctx, "edge", policy.KindConfig); d.Created != nil || d.Ended != nil {
		t.Fatal("a second run with nothing new changes nothing")
	}
	changeFleet(m, "edge", func(f *fleet.Fleet) { f.Config.Hash = "h3" }) // a new commit renders another hash
	d, err = p.Run(ctx, "edge", policy.KindConfig)
	if err != nil || d.Ended == nil || d.Created == nil {
		t.Fatalf("third run: %v %+v", err, d)
	}
	if m.Rollouts["r1"].Status != rollout.Superseded || m.Rollouts["r3"].Status != rollout.Pending || m.Rollouts["r3"].ToRef != "h3" {
		t.Fatalf("rollouts %+v", m.Rollouts)
	}
	for _, tg := range m.Targets["r1"] {
		if tg.Status != rollout.TargetCancelled {
			t.Fatalf("target of the superseded rollout %+v, want cancelled", tg)
		}
	}
	// the end is notified with the rollout as it was stored
	es := m.Events()
	if len(es) != 1 || es[0].Type != "rollout.superseded" || es[0].EventID != notify.ID("r1", m.Rollouts["r1"].Version, 0) || es[0].Rollout.Status != rollout.Superseded ||
		es[0].Reason != m.Rollouts["r1"].StatusReason || es[0].Rollout.Counts["cancelled"] != 3 || !es[0].Time.Equal(planner.T0) {
		t.Fatalf("events %+v, want rollout.superseded of r1 with its 3 cancelled targets", es)
	}
}

func TestRun_SecondPlannerLosesTheActiveRolloutRace(t *testing.T) {
	ctx := context.Background()
	m := seeded()
	in, err := newPlanner(m).Load(ctx, "edge", policy.KindConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPlanner(m).Run(ctx, "edge", policy.KindConfig); err != nil {
		t.Fatal(err)
	}
	// A second planner that read before the first wrote.
	d := planner.Decide(in)
	if err := newPlanner(m).Apply(ctx, in, d); !errors.Is(err, planner.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	active := 0
	for _, r := range m.Rollouts {
		if r.Status.Active() {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d active rollouts, want exactly 1", active)
	}
}

func TestRun_UISelectionPlanned(t *testing.T) {
	ctx := context.Background()
	m := seeded()
	m.Selections["edge"] = selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0", SelectedBy: "user:bob", Revision: 1}
	d, err := newPlanner(m).Run(ctx, "edge", policy.KindVersion)
	if err != nil || d.Created == nil {
		t.Fatalf("%v %+v", err, d)
	}
	s := m.Selections["edge"]
	if s.PlannedAt == nil || s.RolloutID != d.Created.Rollout.ID || s.Revision != 2 {
		t.Fatalf("selection %+v", s)
	}
	for _, a := range m.Agents {
		if a.TargetVersion != "0.162.0" {
			t.Fatalf("agent %s target version %q, want 0.162.0", a.ID, a.TargetVersion)
		}
	}
}

// A version run reads the executor objects of the applied revision: the
// rollout it creates stores the snapshot of the fleet's.
func TestRun_VersionRolloutStoresTheExecutorObject(t *testing.T) {
	m := seeded()
	changeFleet(m, "edge", func(f *fleet.Fleet) { f.Update.Executor, f.Update.ExecutorRef = fleet.ExecutorWebhook, "edge-hook" })
	m.Executors = map[string]executorobject.Object{"edge-hook": {Name: "edge-hook", Type: executorobject.TypeWebhook,
		Webhook: &executorobject.Webhook{URL: "https://deploy.example.com/x", SecretRef: "edge-hook"}}}
	d, err := newPlanner(m).Run(context.Background(), "edge", policy.KindVersion)
	if err != nil || d.Created == nil {
		t.Fatalf("run: %v, note %q", err, d.Note)
	}
	if o := m.Rollouts[d.Created.Rollout.ID].ExecutorObject; o == nil || o.Name != "edge-hook" || o.Webhook.URL != "https://deploy.example.com/x" {
		t.Fatalf("stored executor object %+v", o)
	}
}
