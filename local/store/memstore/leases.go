package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// Lease is a gateway task's lease as the store keeps it: started names the
// process of the task that holds it.
type Lease struct {
	Started, Until time.Time
	Ended          bool
}

// RenewLease writes the task's lease while it is absent, or this
// process's and not ended; otherwise rollout.ErrConflict (a second process
// of one task id, or a renewal racing the drain, takes nothing over).
func (m *Store) RenewLease(_ context.Context, task string, started, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.GatewayLeases[task]; ok && (!l.Started.Equal(started) || l.Ended) {
		return fmt.Errorf("renew lease of gateway task %s: %w", task, rollout.ErrConflict)
	}
	m.GatewayLeases[task] = Lease{Started: started, Until: until}
	return nil
}

// EndLease ends the task's lease at at while it is absent or this
// process's; otherwise rollout.ErrConflict.
func (m *Store) EndLease(_ context.Context, task string, started, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.GatewayLeases[task]; ok && !l.Started.Equal(started) {
		return fmt.Errorf("end lease of gateway task %s: %w", task, rollout.ErrConflict)
	}
	m.GatewayLeases[task] = Lease{Started: started, Until: at, Ended: true}
	return nil
}

// Leases serves every task's lease as readers see it (agent.LeaseSource).
func (m *Store) Leases(context.Context) (agent.Leases, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(agent.Leases, len(m.GatewayLeases))
	for task, l := range m.GatewayLeases {
		out[task] = agent.Lease{Until: l.Until, Ended: l.Ended}
	}
	return out, nil
}
