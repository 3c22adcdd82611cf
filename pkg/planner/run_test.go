package planner

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/executorobject"
	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/notify"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selection"
)

func newPlanner(m *memStore) Planner {
	n := 0
	return Planner{Store: m, Clock: func() time.Time { return t0 }, NewID: func() string { n++; return fmt.Sprintf("r%d", n) }}
}

func seeded() *memStore {
	m := newMemStore()
	m.fleets["edge"] = edgeFleet()
	m.commit = "c9"
	m.policies["cfg"] = policy.Policy{Name: "cfg"}
	m.policies["ver"] = policy.Policy{Name: "ver"}
	for _, a := range agents(3) {
		m.agents[a.ID] = a
	}
	return m
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
	m.fleets["edge"].Config.Hash = "h3" // a new commit renders another hash
	d, err = p.Run(ctx, "edge", policy.KindConfig)
	if err != nil || d.Ended == nil || d.Created == nil {
		t.Fatalf("third run: %v %+v", err, d)
	}
	if m.rollouts["r1"].Status != rollout.Superseded || m.rollouts["r3"].Status != rollout.Pending || m.rollouts["r3"].ToRef != "h3" {
		t.Fatalf("rollouts %+v", m.rollouts)
	}
	for _, tg := range m.targets["r1"] {
		if tg.Status != rollout.TargetCancelled {
			t.Fatalf("target of the superseded rollout %+v, want cancelled", tg)
		}
	}
	// the end is notified with the rollout as it was stored
	es := m.events.Events()
	if len(es) != 1 || es[0].Type != "rollout.superseded" || es[0].EventID != notify.ID("r1", m.rollouts["r1"].Version, 0) || es[0].Rollout.Status != rollout.Superseded ||
		es[0].Reason != m.rollouts["r1"].StatusReason || es[0].Rollout.Counts["cancelled"] != 3 || !es[0].Time.Equal(t0) {
		t.Fatalf("events %+v, want rollout.superseded of r1 with its 3 cancelled targets", es)
	}
}

func TestRun_SecondPlannerLosesTheActiveRolloutRace(t *testing.T) {
	ctx := context.Background()
	m := seeded()
	in, err := newPlanner(m).load(ctx, "edge", policy.KindConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPlanner(m).Run(ctx, "edge", policy.KindConfig); err != nil {
		t.Fatal(err)
	}
	// A second planner that read before the first wrote.
	d := Decide(in)
	if err := newPlanner(m).apply(ctx, in, d); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	active := 0
	for _, r := range m.rollouts {
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
	m.selections["edge"] = &selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0", SelectedBy: "user:bob", Revision: 1}
	d, err := newPlanner(m).Run(ctx, "edge", policy.KindVersion)
	if err != nil || d.Created == nil {
		t.Fatalf("%v %+v", err, d)
	}
	s := m.selections["edge"]
	if s.PlannedAt == nil || s.RolloutID != d.Created.Rollout.ID || s.Revision != 2 {
		t.Fatalf("selection %+v", s)
	}
	for _, a := range m.agents {
		if a.TargetVersion != "0.162.0" {
			t.Fatalf("agent %s target version %q, want 0.162.0", a.ID, a.TargetVersion)
		}
	}
}

// A version run reads the executor objects of the applied revision: the
// rollout it creates stores the snapshot of the fleet's.
func TestRun_VersionRolloutStoresTheExecutorObject(t *testing.T) {
	m := seeded()
	m.fleets["edge"].Update.Executor, m.fleets["edge"].Update.ExecutorRef = fleet.ExecutorWebhook, "edge-hook"
	m.executors = map[string]executorobject.Object{"edge-hook": {Name: "edge-hook", Type: executorobject.TypeWebhook,
		Webhook: &executorobject.Webhook{URL: "https://deploy.example.com/x", SecretRef: "edge-hook"}}}
	d, err := newPlanner(m).Run(context.Background(), "edge", policy.KindVersion)
	if err != nil || d.Created == nil {
		t.Fatalf("run: %v, note %q", err, d.Note)
	}
	if o := m.rollouts[d.Created.Rollout.ID].ExecutorObject; o == nil || o.Name != "edge-hook" || o.Webhook.URL != "https://deploy.example.com/x" {
		t.Fatalf("stored executor object %+v", o)
	}
}
