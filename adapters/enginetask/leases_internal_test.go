package enginetask

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/rollout"
)

type leaseStore struct{ Store }

func (leaseStore) LoadRollout(context.Context, string) (rollout.Rollout, []rollout.Target, error) {
	return rollout.Rollout{ID: "r1"}, []rollout.Target{{RolloutID: "r1", AgentID: "a1"}}, nil
}

func (leaseStore) AgentsByID(context.Context, []string) (map[string]agent.Agent, error) {
	return map[string]agent.Agent{"a1": {ID: "a1", Online: true, Task: "task-1"}}, nil
}

func (leaseStore) SaveEvaluation(context.Context, rollout.Rollout, []rollout.Target, ...notify.Event) error {
	return nil
}

type leaseSource agent.Leases

func (l leaseSource) Leases(context.Context) (agent.Leases, error) { return agent.Leases(l), nil }

// Every evaluation judges agents by the leases read for it.
func TestEvaluate_ReadsLeases(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	p := Evaluator{Store: leaseStore{}, Clock: func() time.Time { return t0 },
		Liveness: agent.Liveness{Silence: 90 * time.Second, Source: leaseSource{"task-1": {Until: t0.Add(-time.Second)}}}}
	in, err := p.load(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if online, _ := in.Liveness.Online(in.Agents["a1"], in.Now); online {
		t.Error("an agent of a task whose lease ran out counts as online in the evaluation")
	}
}
