package store

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
)

// Agent item attributes that items written before schema version 3 carry
// beside their document; since then agentDocument packs them.
const (
	attrAckHash  = "ackHash"  // desired hash the gateway delivered and the agent acknowledged
	attrAckOffer = "ackOffer" // package offer the gateway delivered
	attrAssigned = "assignedRev"
)

// Push is what the gateway delivered to an agent. The agent lags (and is in
// the lagging index) while its desired hash or its package offer is neither
// delivered nor already what the agent reports.
type Push struct {
	AckedHash  string
	AckedOffer string
}

// AgentRecord is an agent as stored: the core view, what was pushed to it,
// whether its fleet must still be (re)assigned, and the item's write counter.
type AgentRecord struct {
	agent.Agent
	Push Push
	// AssignPending: the agent is new or its attributes changed since its
	// fleet was last computed (the assignment index holds it).
	AssignPending bool
	// AssignedRev is the revision pointer's counter the assignment was
	// computed against, so that an older computation never overwrites a
	// newer one.
	AssignedRev int64
	// Credential is the agent's own credential, as digests (agentcreds.go).
	Credential Credential
	Version    int64
	// FactsVersion is the counter of the item's last write that changed
	// anything but the desired state (attribute fv; 0 when the item was
	// written by a build before it): a gateway session that wrote or read
	// that version may take a later desired state from the lagging index
	// and write over its counter without reading the agent (lagging.go).
	FactsVersion int64
	// desiredOnly marks a write that changes the desired state alone
	// (DesiredHash, PackageOffer, TargetVersion): it keeps FactsVersion.
	desiredOnly bool
	// was is the item as read for this write (written.go); nil for a new
	// agent.
	was *was
}

// Values of the assignState attribute.
const (
	assignPendingPrefix = "pending#"
	assignError         = "error"
)

func (r AgentRecord) assignState() string {
	switch {
	case r.AssignPending:
		return assignPendingPrefix + lagShard(r.ID)
	case r.AssignmentError != "":
		return assignError
	}
	return ""
}

// Lagging reports whether the gateway has something to send: a desired hash
// or a package offer that it has not delivered and that the agent does not
// already run.
func (r AgentRecord) Lagging() bool {
	a := r.Agent
	cfg := a.DesiredHash != "" && a.DesiredHash != r.Push.AckedHash && a.DesiredHash != a.RemoteConfig.Hash
	offer := a.PackageOffer != "" && a.PackageOffer != r.Push.AckedOffer &&
		fleet.NormalizeVersion(agent.OfferVersion(a.PackageOffer)) != a.ServiceVersion
	return cfg || offer
}

func agentKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{tables.AttrID: str(id)}
}

func encodeAgent(r AgentRecord, version int64) (item, error) {
	a := utcAgent(r.Agent)
	it := newItem().s(tables.AttrID, a.ID).n(attrV, version).sIf(tables.AttrFleet, a.Fleet).
		s(tables.AttrName, a.DisplayName()).sIf(tables.AttrAssignState, r.assignState()).
		sIf(tables.AttrCollector, a.LinkedCollector())
	fv := version
	if r.desiredOnly && r.FactsVersion > 0 {
		fv = r.FactsVersion
	}
	it.n(tables.AttrFactsV, fv)
	if r.Lagging() {
		it.s(tables.AttrLag, lagShard(a.ID)).lagged(a)
	}
	it.stamp(r.written(a))
	doc := agentDocument{Agent: a, AckHash: r.Push.AckedHash, AckOffer: r.Push.AckedOffer, AssignedRev: r.AssignedRev}
	r.Credential.into(&doc)
	return it.packed(doc, dictAgent2)
}

// agentDocument is what an agent item packs: the agent, and what the store
// keeps beside it that no index and no condition reads. Each of these was an
// attribute of its own until schema version 3; packed they cost about 60
// bytes instead of 190 (random digests and hashes do not shrink, but a hash
// the document already holds costs a back-reference, and names and times
// shrink against the dictionary), and an agent item is read, streamed and
// listed by the lagging index about nine times for every target of a wave
// (docs/scale.md).
type agentDocument struct {
	agent.Agent
	AckHash     string     `json:"ackHash,omitempty"`
	AckOffer    string     `json:"ackOffer,omitempty"`
	AssignedRev int64      `json:"assignedRev,omitempty"`
	Cred        string     `json:"cred,omitempty"`
	CredNext    string     `json:"credNext,omitempty"`
	CredAt      *time.Time `json:"credAt,omitempty"`
	CredRotate  bool       `json:"credRotate,omitempty"`
}

func decodeAgent(av map[string]types.AttributeValue) (AgentRecord, error) {
	id := keyOf(av, tables.AttrID)
	d := newDecoder("agent "+id, av)
	r := AgentRecord{Version: d.num(attrV)}
	d.str(tables.AttrID)
	var doc agentDocument
	d.doc(&doc)
	r.Agent = doc.Agent
	r.Agent.ID, r.Agent.Fleet = id, d.optStr(tables.AttrFleet)
	r.AssignPending = strings.HasPrefix(d.optStr(tables.AttrAssignState), assignPendingPrefix)
	r.FactsVersion = d.optNum(tables.AttrFactsV)
	if d.sv < 3 {
		// written before schema version 3: beside the document
		r.Push = Push{AckedHash: d.optStr(attrAckHash), AckedOffer: d.optStr(attrAckOffer)}
		r.AssignedRev = d.optNum(attrAssigned)
		r.Credential = decodeCredential(d)
		return r, d.err
	}
	r.Push = Push{AckedHash: doc.AckHash, AckedOffer: doc.AckOffer}
	r.AssignedRev = doc.AssignedRev
	r.Credential = credentialOf(doc)
	return r, d.err
}

// keyOf names an item in errors by a key attribute, even a malformed one.
func keyOf(av map[string]types.AttributeValue, name string) string {
	if s, ok := av[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return "(no " + name + ")"
}

// GetAgentRecord reads one agent as stored (strongly consistent); nil when
// it does not exist.
func (s *Store) GetAgentRecord(ctx context.Context, id string) (*AgentRecord, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Agents, Key: agentKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return nil, classify(err, "get agent "+id)
	}
	r, err := decodeAgent(av)
	return &r, err
}

// GetAgent reads one agent (strongly consistent); found is false for an
// unknown id (gateway.Agents).
func (s *Store) GetAgent(ctx context.Context, id string) (agent.Agent, bool, error) {
	r, err := s.GetAgentRecord(ctx, id)
	if err != nil || r == nil {
		return agent.Agent{}, false, err
	}
	return r.Agent, true, nil
}

// AgentsByID reads the agents of an evaluation (eventually consistent: the engine
// judges reports that are seconds old anyway). Missing agents are absent
// from the map: they were deleted.
func (s *Store) AgentsByID(ctx context.Context, ids []string) (map[string]agent.Agent, error) {
	out := make(map[string]agent.Agent, len(ids))
	if err := s.eachAgent(ctx, ids, false, func(r AgentRecord) { out[r.ID] = r.Agent }); err != nil {
		return map[string]agent.Agent{}, err
	}
	return out, nil
}

// LoadAgents is LoadAgent for many agents, in consistent batch reads
// (gateway.BatchReader: the gateway checks a page of the eventually
// consistent lagging index before it pushes). Missing agents are absent.
func (s *Store) LoadAgents(ctx context.Context, ids []string) (map[string]agent.Agent, map[string]any, error) {
	recs, err := s.agentRecords(ctx, ids, true)
	agents, versions := make(map[string]agent.Agent, len(recs)), make(map[string]any, len(recs))
	for id, r := range recs {
		agents[id], versions[id] = r.Agent, versionOf(r)
	}
	return agents, versions, err
}

func (s *Store) agentRecords(ctx context.Context, ids []string, consistent bool) (map[string]AgentRecord, error) {
	out := make(map[string]AgentRecord, len(ids))
	if err := s.eachAgent(ctx, ids, consistent, func(r AgentRecord) { out[r.ID] = r }); err != nil {
		return nil, err
	}
	return out, nil
}

// eachAgent reads the agents of ids, each once, in batch reads of 100
// (several at a time), and hands each agent to keep as its batch is
// decoded, one agent at a time. A batch's items are dropped once decoded:
// when every item was read first, an evaluation over 100,000 targets held
// each (about 2.5 KB in memory) beside its decoded agent, and its heap
// peaked at 623 MB instead of 343-377 MB (make bench-evaluate).
func (s *Store) eachAgent(ctx context.Context, ids []string, consistent bool, keep func(AgentRecord)) error {
	uniq := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	const size = 100 // keys of one BatchGetItem
	var mu sync.Mutex
	return forEach(ctx, (len(uniq)+size-1)/size, workers, func(ctx context.Context, b int) error {
		part := uniq[b*size : min((b+1)*size, len(uniq))]
		keys := make([]map[string]types.AttributeValue, len(part))
		for i, id := range part {
			keys[i] = agentKey(id)
		}
		items, err := s.batchGet(ctx, s.names.Agents, keys, consistent)
		if err != nil {
			return classify(err, "read agents")
		}
		recs := make([]AgentRecord, len(items))
		for i, av := range items {
			if recs[i], err = decodeAgent(av); err != nil {
				return err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range recs {
			keep(r)
		}
		return nil
	})
}

// AgentsOfFleet is one page of a fleet's agents in id order: the ids from
// index byFleet (keys only), then the agents by id.
func (s *Store) AgentsOfFleet(ctx context.Context, fleetName, token string, limit int) (page.Page[agent.Agent], error) {
	start, err := decodeToken(token)
	if err != nil {
		return page.Page[agent.Agent]{}, err
	}
	out, err := s.query(ctx, &dynamodb.QueryInput{
		TableName: &s.names.Agents, IndexName: aws.String(tables.IndexByFleet), Limit: pageLimit(limit), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("#f = :f"),
		ExpressionAttributeNames:  map[string]string{"#f": tables.AttrFleet},
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": str(fleetName)},
	})
	if err != nil {
		return page.Page[agent.Agent]{}, classify(err, "query the agents of fleet "+fleetName)
	}
	ids := make([]string, len(out.Items))
	for i, av := range out.Items {
		ids[i] = keyOf(av, tables.AttrID)
	}
	recs, err := s.agentRecords(ctx, ids, false)
	if err != nil {
		return page.Page[agent.Agent]{}, err
	}
	p := page.Page[agent.Agent]{Next: encodeToken(out.LastEvaluatedKey)}
	for _, id := range ids {
		// An agent deleted or moved since the index was written is left out.
		if r, ok := recs[id]; ok && r.Fleet == fleetName {
			p.Items = append(p.Items, r.Agent)
		}
	}
	return p, nil
}

// FleetAgents lists every agent of a fleet (the planner's read).
func (s *Store) FleetAgents(ctx context.Context, fleetName string) ([]agent.Agent, error) {
	var out []agent.Agent
	token := ""
	for {
		p, err := s.AgentsOfFleet(ctx, fleetName, token, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if token = p.Next; token == "" {
			return out, nil
		}
	}
}

// AllAgents lists every agent, assigned or not, in id order: a scan, for
// the assignment of agents to fleets when a revision is applied.
func (s *Store) AllAgents(ctx context.Context) ([]agent.Agent, error) {
	var out []agent.Agent
	var start map[string]types.AttributeValue
	for {
		res, err := s.scan(ctx, &dynamodb.ScanInput{TableName: &s.names.Agents, ExclusiveStartKey: start})
		if err != nil {
			return nil, classify(err, "scan the agents")
		}
		for _, av := range res.Items {
			r, err := decodeAgent(av)
			if err != nil {
				return nil, err
			}
			out = append(out, r.Agent)
		}
		if start = res.LastEvaluatedKey; start == nil {
			sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
			return out, nil
		}
	}
}
