package memstore

import (
	"context"
	"sort"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
)

// Push is what the gateway delivered to an agent and the agent took (the
// store's Push): the last acknowledged desired hash and package offer.
// The lagging index waits for it.
type Push struct{ AckedHash, AckedOffer string }

// version is an agent's item counter, as the DynamoDB store keeps one: it
// grows with every write of the item. It is no gateway.OrderedVersion, and
// this store writes whatever version a caller hands back, so a caller's
// version only tells it whether a write happened.
type version int64

// putAgent stores a and counts the write on the agent's counter, which it
// returns.
func (m *Store) putAgent(a agent.Agent) version {
	m.Agents[a.ID] = a
	m.versions[a.ID]++
	return version(m.versions[a.ID])
}

// LoadAgent is GetAgent with the agent's counter as its version (nil when
// not found).
func (m *Store) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	a, ok, err := m.GetAgent(ctx, id)
	if err != nil || !ok {
		return a, ok, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return a, true, version(m.versions[id]), nil
}

// LoadAgents reads many agents at once (gateway.BatchReader); missing ones
// are absent from both maps.
func (m *Store) LoadAgents(_ context.Context, ids []string) (map[string]agent.Agent, map[string]any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	agents, versions := make(map[string]agent.Agent, len(ids)), make(map[string]any, len(ids))
	for _, id := range ids {
		if a, ok := m.Agents[id]; ok {
			agents[id], versions[id] = a, version(m.versions[id])
		}
	}
	return agents, versions, nil
}

// SaveAgent is the gateway's write of a report, with the store's rules:
// what others own (the fleet, the assignment error, the desired state) is
// kept as stored, lastSeen never goes back, a configuration hash reported
// for the first time counts as delivered, and a report of an older
// connection than the stored one writes nothing. It returns the version
// it wrote, or v when it wrote nothing.
func (m *Store) SaveAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("SaveAgent"); err != nil {
		return v, err
	}
	cur, ok := m.Agents[a.ID]
	switch {
	case !ok:
		m.deliveredByReport(a, "")
		return m.putAgent(a), nil // a new agent: stored as reported
	case cur.ConnectedAt.After(a.ConnectedAt):
		return v, nil // a newer connection owns the agent
	}
	return m.putAgent(m.merged(a, cur)), nil
}

// DisconnectAgent writes a (offline) over the stored agent unless a newer
// connection owns it: another task, a later connection, or the agent is
// offline already. It returns the version it wrote, or v.
func (m *Store) DisconnectAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.Agents[a.ID]
	if !ok || !cur.Online || cur.Task != a.Task || cur.ConnectedAt.After(a.ConnectedAt) {
		return v, nil
	}
	return m.putAgent(m.merged(a, cur)), nil
}

// merged is the report a over the stored cur, as the store merges it.
func (m *Store) merged(a, cur agent.Agent) agent.Agent {
	a.Fleet, a.AssignmentError = cur.Fleet, cur.AssignmentError
	a.DesiredHash, a.TargetVersion, a.PackageOffer = cur.DesiredHash, cur.TargetVersion, cur.PackageOffer
	if a.LastSeen.Before(cur.LastSeen) {
		a.LastSeen = cur.LastSeen
	}
	m.deliveredByReport(a, cur.RemoteConfig.Hash)
	return a
}

// deliveredByReport records a configuration hash that a reports for the
// first time (not was) as delivered: the agent got it, and a later return
// of the desired hash to an earlier one (a rollback) must not look
// delivered.
func (m *Store) deliveredByReport(a agent.Agent, was string) {
	if h := a.RemoteConfig.Hash; h != "" && h != was {
		p := m.Pushes[a.ID]
		p.AckedHash = h
		m.Pushes[a.ID] = p
	}
}

// AckPush records what the gateway delivered ("" leaves a field as it is);
// an unknown agent is left unknown.
func (m *Store) AckPush(_ context.Context, id, hash, offer string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.Agents[id]
	if !ok {
		return nil
	}
	before := m.Pushes[id]
	p := before
	if hash != "" {
		p.AckedHash = hash
	}
	if offer != "" {
		p.AckedOffer = offer
	}
	if p != before {
		m.Pushes[id] = p
		m.putAgent(a)
	}
	return nil
}

// LaggingAgents pages the agents the gateway has something to push to, in
// id order; the token is the last id of the page before. It lists no
// versions: a poll reads every changed entry again.
func (m *Store) LaggingAgents(_ context.Context, token string, limit int) ([]agent.Agent, []any, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, a := range m.Agents {
		if id > token && lagging(a, m.Pushes[id]) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if limit <= 0 {
		limit = 100 // store.DefaultPageSize
	}
	page := make([]agent.Agent, 0, min(len(ids), limit))
	for _, id := range ids {
		if len(page) == limit {
			return page, nil, page[len(page)-1].ID, nil
		}
		page = append(page, m.Agents[id])
	}
	return page, nil, "", nil
}

// lagging is the store's rule of the lagging index (AgentRecord.Lagging):
// a desired hash or a package offer neither delivered nor already what the
// agent reports.
func lagging(a agent.Agent, p Push) bool {
	cfg := a.DesiredHash != "" && a.DesiredHash != p.AckedHash && a.DesiredHash != a.RemoteConfig.Hash
	offer := a.PackageOffer != "" && a.PackageOffer != p.AckedOffer &&
		fleet.NormalizeVersion(agent.OfferVersion(a.PackageOffer)) != a.ServiceVersion
	return cfg || offer
}
