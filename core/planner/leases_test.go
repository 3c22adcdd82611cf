package planner_test

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
)

type staticLeases agent.Leases

func (l staticLeases) Leases(context.Context) (agent.Leases, error) { return agent.Leases(l), nil }

// The planner judges agents by the gateway leases: agents connected for
// eight days to a live task get targets, those of a task whose lease ran out
// eight days ago are gone and get none.
func TestRun_JudgesAgentsByLeases(t *testing.T) {
	for _, tt := range []struct {
		name    string
		until   time.Time
		targets int
	}{
		{name: "live task", until: planner.T0.Add(time.Minute), targets: 3},
		{name: "dead task", until: planner.T0.Add(-8 * 24 * time.Hour), targets: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := seeded()
			for id, a := range m.Agents {
				a.Online, a.Task, a.LastSeen = true, "task-1", planner.T0.Add(-8*24*time.Hour)
				m.Agents[id] = a
			}
			p := newPlanner(m)
			p.Liveness = agent.Liveness{Retention: 7 * 24 * time.Hour, Source: staticLeases{"task-1": {Until: tt.until}}}
			d, err := p.Run(context.Background(), "edge", policy.KindConfig)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if d.Created != nil {
				got = len(d.Created.Targets)
			}
			if got != tt.targets {
				t.Errorf("%d targets, want %d", got, tt.targets)
			}
		})
	}
}
