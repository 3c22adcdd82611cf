package planner

import (
	"context"
	"sort"
	"sync"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/executorobject"
	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/notify"
	"github.com/myriarch/myriarch/pkg/notify/notifytest"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selection"
)

// memStore is the in-memory Store of the tests, with the same conditions as
// the DynamoDB store: revisions, rollout versions and one active rollout.
type memStore struct {
	mu         sync.Mutex
	fleets     map[string]*fleet.Fleet
	commit     string
	policies   map[string]policy.Policy
	executors  map[string]executorobject.Object
	selections map[string]*selection.Selection
	agents     map[string]agent.Agent
	rollouts   map[string]rollout.Rollout
	targets    map[string][]rollout.Target // by rollout id
	audit      []audit.Entry
	events     notifytest.Feed
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{fleets: map[string]*fleet.Fleet{}, policies: map[string]policy.Policy{}, selections: map[string]*selection.Selection{},
		agents: map[string]agent.Agent{}, rollouts: map[string]rollout.Rollout{}, targets: map[string][]rollout.Target{}}
}

func (m *memStore) Fleet(_ context.Context, name string) (*fleet.Fleet, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fleets[name], m.commit, nil
}

func (m *memStore) Policies(context.Context) (map[string]policy.Policy, error) {
	return m.policies, nil
}

func (m *memStore) ExecutorObjects(context.Context) (map[string]executorobject.Object, error) {
	return m.executors, nil
}

func (m *memStore) Selection(_ context.Context, f string) (*selection.Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.selections[f]; s != nil {
		c := *s
		return &c, nil
	}
	return nil, nil
}

func (m *memStore) FleetAgents(_ context.Context, f string) ([]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.agents {
		if a.Fleet == f {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memStore) ActiveRollout(_ context.Context, f string, k policy.Kind) (*Active, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, r := range m.rollouts {
		if r.Fleet == f && r.Kind == k && r.Status.Active() {
			return &Active{Rollout: r, Targets: append([]rollout.Target(nil), m.targets[id]...)}, nil
		}
	}
	return nil, nil
}

func (m *memStore) LastTargets(_ context.Context, ids []string, k policy.Kind) (map[string]LastTarget, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]LastTarget{}
	for id, r := range m.rollouts {
		if r.Kind != k {
			continue
		}
		for _, t := range m.targets[id] {
			if prev, ok := out[t.AgentID]; !ok || m.rollouts[prev.Target.RolloutID].CreatedAt.Before(r.CreatedAt) {
				out[t.AgentID] = LastTarget{Target: t, RolloutStatus: r.Status}
			}
		}
	}
	return out, nil
}

func (m *memStore) SaveSelection(_ context.Context, f string, s *selection.Selection, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.selections[f]
	if cur != nil && cur.Revision != prev || cur == nil && prev != 0 && s != nil {
		return ErrConflict
	}
	m.selections[f] = s
	return nil
}

func (m *memStore) SetAgentTargetVersions(_ context.Context, vs map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, v := range vs {
		a := m.agents[id]
		a.TargetVersion = v
		m.agents[id] = a
	}
	return nil
}

func (m *memStore) SetDesiredHash(_ context.Context, ids []string, h string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		a := m.agents[id]
		a.DesiredHash = h
		m.agents[id] = a
	}
	return nil
}

func (m *memStore) EndRollout(_ context.Context, r rollout.Rollout, cancelled []rollout.Target, events ...notify.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rollouts[r.ID].Version != r.Version {
		return ErrConflict
	}
	r.Version++
	m.rollouts[r.ID] = r
	m.replaceTargets(r.ID, cancelled)
	m.events.Append(r.Version, events)
	return nil
}

func (m *memStore) AddTargets(_ context.Context, r rollout.Rollout, ts []rollout.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rollouts[r.ID].Version != r.Version {
		return ErrConflict
	}
	r.Version++
	m.rollouts[r.ID] = r
	m.targets[r.ID] = append(m.targets[r.ID], ts...)
	return nil
}

func (m *memStore) CreateRollout(_ context.Context, r rollout.Rollout, ts []rollout.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.rollouts {
		if o.Fleet == r.Fleet && o.Kind == r.Kind && o.Status.Active() {
			return ErrConflict
		}
	}
	m.rollouts[r.ID] = r
	m.targets[r.ID] = ts
	return nil
}

func (m *memStore) AppendAudit(_ context.Context, es []audit.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.audit = append(m.audit, es...)
	return nil
}

func (m *memStore) replaceTargets(id string, ts []rollout.Target) {
	for _, t := range ts {
		for i := range m.targets[id] {
			if m.targets[id][i].AgentID == t.AgentID {
				m.targets[id][i] = t
			}
		}
	}
}
