package memstore

import (
	"context"
	"sort"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
)

func (m *Store) AppliedFleets(context.Context) ([]fleet.Fleet, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Revision == nil {
		return nil, 0, nil
	}
	out := make([]fleet.Fleet, 0, len(m.FleetsByName))
	for _, f := range m.FleetsByName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, m.Revision.Version, nil
}

func (m *Store) PendingAssignments(context.Context) ([]string, error) { return nil, nil }

func (m *Store) CurrentSweep(context.Context) (assignment.Sweep, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Sweep, nil
}

func (m *Store) AssignPage(_ context.Context, _ int64, cursor string, limit int, decide func(agent.Agent) assignment.Outcome) ([]assignment.Swept, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("AssignPage"); err != nil {
		return nil, "", err
	}
	ids := make([]string, 0, len(m.Agents))
	for id := range m.Agents {
		if id > cursor {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	next := ""
	if len(ids) > limit {
		ids, next = ids[:limit], ids[limit-1]
	}
	out := make([]assignment.Swept, 0, len(ids))
	for _, id := range ids {
		a := m.Agents[id]
		before := a
		changed := decide(a).Apply(&a)
		m.Agents[id] = a
		out = append(out, assignment.Swept{Before: before, After: a, Changed: changed})
	}
	return out, next, nil
}

func (m *Store) AdvanceSweep(_ context.Context, rev int64, from, to string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Sweep.Rev != rev || m.Sweep.Done || m.Sweep.Cursor != from {
		return false, nil
	}
	m.Sweep = assignment.Sweep{Rev: rev, Cursor: to, Done: to == ""}
	return true, nil
}
