package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// memAgents is an in-memory Agents with the semantics the gateway expects of
// the DynamoDB store: SaveAgent keeps the desired state, DisconnectAgent
// yields to a newer connection, and the lagging index lists agents whose desired
// hash or package offer is neither delivered nor reported yet. Like the
// store, it keeps one delivered hash and one delivered offer per agent: the
// last acknowledged, or for the hash the last newly reported one.
type memAgents struct {
	mu         sync.Mutex
	byID       map[string]agent.Agent
	writes     int // SaveAgent and DisconnectAgent calls that stored something
	offlines   int
	acks       []string          // every AckPush, in order
	ackedHash  map[string]string // by agent id, as the store's ackHash
	ackedOffer map[string]string // by agent id, as the store's ackOffer
	batchReads int               // LoadAgents calls
	loads      int               // LoadAgent calls (LoadAgents' own not counted)
	pages      int               // LaggingAgents calls
	panicOn    string            // SaveAgent panics for this agent id
	leases     agent.Leases
}

var (
	_ Agents      = (*memAgents)(nil)
	_ PushAcker   = (*memAgents)(nil)
	_ BatchReader = (*memAgents)(nil)
)

func newMemAgents() *memAgents {
	return &memAgents{byID: make(map[string]agent.Agent), ackedHash: make(map[string]string), ackedOffer: make(map[string]string)}
}

func (m *memAgents) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.byID[id]
	return a, ok, nil
}

func (m *memAgents) LoadAgents(ctx context.Context, ids []string) (map[string]agent.Agent, map[string]any, error) {
	agents, versions := make(map[string]agent.Agent, len(ids)), make(map[string]any, len(ids))
	for _, id := range ids {
		if a, ok, _ := m.GetAgent(ctx, id); ok {
			agents[id], versions[id] = a, nil // no versions, as LoadAgent
		}
	}
	m.mu.Lock()
	m.batchReads++
	m.mu.Unlock()
	return agents, versions, nil
}

func (m *memAgents) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	m.mu.Lock()
	m.loads++
	m.mu.Unlock()
	a, ok, err := m.GetAgent(ctx, id)
	return a, ok, nil, err
}

func (m *memAgents) SaveAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.ID == m.panicOn {
		panic("store exploded")
	}
	old := m.byID[a.ID]
	a.Fleet, a.DesiredHash, a.PackageOffer, a.TargetVersion = old.Fleet, old.DesiredHash, old.PackageOffer, old.TargetVersion
	if h := a.RemoteConfig.Hash; h != "" && h != old.RemoteConfig.Hash {
		m.ackedHash[a.ID] = h // a newly reported hash was delivered (store.SaveAgent)
	}
	m.byID[a.ID] = a
	m.writes++
	return v, nil
}

func (m *memAgents) DisconnectAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.byID[a.ID]
	if !ok || !old.Online || old.Task != a.Task || old.ConnectedAt.After(a.ConnectedAt) {
		return v, nil // a newer connection owns the agent
	}
	old.Online, old.LastSeen = false, a.LastSeen
	m.byID[a.ID] = old
	m.writes++
	m.offlines++
	return v, nil
}

func (m *memAgents) RenewLease(_ context.Context, task string, _, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases == nil {
		m.leases = agent.Leases{}
	}
	if l, ok := m.leases[task]; ok && l.Ended {
		return fmt.Errorf("lease of %s ended", task)
	}
	m.leases[task] = agent.Lease{Until: until}
	return nil
}

func (m *memAgents) EndLease(_ context.Context, task string, _, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases == nil {
		m.leases = agent.Leases{}
	}
	m.leases[task] = agent.Lease{Until: at, Ended: true}
	return nil
}

// Leases serves the leases as a reader would read them.
func (m *memAgents) Leases(context.Context) (agent.Leases, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.leases), nil
}

// LaggingAgents lists no versions: every changed entry is read again.
func (m *memAgents) LaggingAgents(_ context.Context, token string, limit int) ([]agent.Agent, []any, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pages++
	var ids []string
	for id, a := range m.byID {
		if m.lagging(a) && id > token {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var page []agent.Agent
	for _, id := range ids {
		if len(page) == limit {
			return page, nil, page[len(page)-1].ID, nil
		}
		page = append(page, m.byID[id])
	}
	return page, nil, "", nil
}

// lagging is pkg/store's rule (store.AgentRecord.Lagging): a desired hash or
// offer neither delivered (the last acknowledged) nor already what the agent
// reports.
func (m *memAgents) lagging(a agent.Agent) bool {
	return (a.DesiredHash != "" && a.DesiredHash != m.ackedHash[a.ID] && a.DesiredHash != a.RemoteConfig.Hash) ||
		(a.PackageOffer != "" && a.PackageOffer != m.ackedOffer[a.ID] && NormalizeVersion(a.PackageOffer) != a.ServiceVersion)
}

func (m *memAgents) ackList() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.acks)
}

func (m *memAgents) AckPush(_ context.Context, id, hash, offer string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acks = append(m.acks, fmt.Sprintf("%s %s %s", id, hash, offer))
	if hash != "" {
		m.ackedHash[id] = hash
	}
	if offer != "" {
		m.ackedOffer[id] = offer
	}
	return nil
}

// setDesired is the engine's side: a desired hash and a package offer.
func (m *memAgents) setDesired(id, hash, offer string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.byID[id]
	a.ID, a.DesiredHash, a.PackageOffer = id, hash, offer
	m.byID[id] = a
}

func (m *memAgents) get(id string) agent.Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

func (m *memAgents) writeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

func (m *memAgents) offlineCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offlines
}

// memConfigs serves configurations by hash.
type memConfigs map[string]string

func (c memConfigs) ConfigByHash(_ context.Context, hash string) ([]byte, string, error) {
	body, ok := c[hash]
	if !ok {
		return nil, "", fmt.Errorf("no configuration %s", hash)
	}
	return []byte(body), "text/yaml", nil
}

// clock is a fake clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
