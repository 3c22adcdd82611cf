package memstore

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/page"
)

func (m *Store) AgentsByID(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("AgentsByID"); err != nil {
		return nil, err
	}
	out := map[string]agent.Agent{}
	for _, id := range ids {
		if a, ok := m.Agents[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

func (m *Store) FleetAgents(_ context.Context, f string) ([]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.Agents {
		if a.Fleet == f {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *Store) AllAgents(context.Context) ([]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.Agents {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *Store) AssignAgent(_ context.Context, id string, _ int64, decide func(agent.Agent) assignment.Outcome) (before, after agent.Agent, changed bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.Agents[id]
	if !ok {
		return before, after, false, nil
	}
	before = a
	changed = decide(a).Apply(&a)
	m.Agents[id] = a
	return before, a, changed, nil
}

// --- the inventory: pages in id order, as the store's indexes give them

func (m *Store) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("GetAgent"); err != nil {
		return agent.Agent{}, false, err
	}
	if err := keyError(id); err != nil {
		return agent.Agent{}, false, err
	}
	a, ok := m.Agents[id]
	return a, ok, nil
}

func (m *Store) AgentsByName(_ context.Context, name string, limit int) ([]agent.Agent, error) {
	if err := keyError(name); err != nil {
		return nil, err
	}
	named := m.agentsWhere(func(a agent.Agent) bool { return a.DisplayName() == name })
	return named[:min(len(named), limit)], nil
}

func (m *Store) AgentsPage(_ context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	if err := m.failing("AgentsPage"); err != nil {
		return page.Page[agent.Agent]{}, err
	}
	return pageOf(m.agentsWhere(func(agent.Agent) bool { return true }), token, limit)
}

func (m *Store) AgentsOfFleet(_ context.Context, f, token string, limit int) (page.Page[agent.Agent], error) {
	if err := keyError(f); err != nil {
		return page.Page[agent.Agent]{}, err
	}
	return pageOf(m.agentsWhere(func(a agent.Agent) bool { return a.Fleet == f }), token, limit)
}

func (m *Store) AgentsWithAssignmentError(_ context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	return pageOf(m.agentsWhere(func(a agent.Agent) bool { return a.AssignmentError != "" }), token, limit)
}

func (m *Store) agentsWhere(keep func(agent.Agent) bool) []agent.Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.Agents {
		if keep(a) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (m *Store) SetDesiredHash(_ context.Context, ids []string, h string) error {
	return m.updateAgents(ids, func(a *agent.Agent) { a.DesiredHash = h })
}

func (m *Store) SetAgentTargetVersions(_ context.Context, vs map[string]string) error {
	for id, v := range vs {
		if err := m.updateAgents([]string{id}, func(a *agent.Agent) { a.TargetVersion = v }); err != nil {
			return err
		}
	}
	return nil
}

func (m *Store) SetPackageOffer(_ context.Context, id, v string) error {
	return m.updateAgents([]string{id}, func(a *agent.Agent) { a.PackageOffer = v })
}

func (m *Store) updateAgents(ids []string, change func(*agent.Agent)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if a, ok := m.Agents[id]; ok {
			change(&a)
			m.putAgent(a)
		}
	}
	return nil
}

func (m *Store) LinkedUpdaters(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return agent.LinkUpdaters(slices.Collect(maps.Values(m.Agents)), ids), nil
}
