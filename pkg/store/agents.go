package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/store/tables"
)

// Agent item attributes beyond the keys (id, fleet, lag).
const (
	attrAckHash  = "ackHash"  // desired hash the gateway delivered and the agent acknowledged
	attrAckOffer = "ackOffer" // package offer the gateway delivered
)

// Push is what the gateway delivered to an agent. The agent lags (and is in
// the lagging index) while its desired hash or its package offer is neither
// delivered nor already what the agent reports.
type Push struct {
	AckedHash  string
	AckedOffer string
}

// AgentRecord is an agent as stored: the core view, what was pushed to it
// and the item's write counter.
type AgentRecord struct {
	agent.Agent
	Push    Push
	Version int64
}

// Lagging reports whether the gateway has something to send: a desired hash
// or a package offer that it has not delivered and that the agent does not
// already run.
func (r AgentRecord) Lagging() bool {
	a := r.Agent
	cfg := a.DesiredHash != "" && a.DesiredHash != r.Push.AckedHash && a.DesiredHash != a.RemoteConfig.Hash
	offer := a.PackageOffer != "" && a.PackageOffer != r.Push.AckedOffer &&
		fleet.NormalizeVersion(a.PackageOffer) != a.ServiceVersion
	return cfg || offer
}

func agentKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{tables.AttrID: str(id)}
}

func encodeAgent(r AgentRecord, version int64) (item, error) {
	a := utcAgent(r.Agent)
	it := newItem().s(tables.AttrID, a.ID).n(attrV, version).sIf(tables.AttrFleet, a.Fleet).
		sIf(attrAckHash, r.Push.AckedHash).sIf(attrAckOffer, r.Push.AckedOffer)
	if r.Lagging() {
		it.s(tables.AttrLag, lagShard(a.ID))
	}
	return it.doc(a)
}

// lagShard spreads the lagging index over tables.LagShards partition keys
// by a hash of the agent id.
func lagShard(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return strconv.Itoa(int(h.Sum32() % tables.LagShards))
}

func decodeAgent(av map[string]types.AttributeValue) (AgentRecord, error) {
	id := keyOf(av, tables.AttrID)
	d := newDecoder("agent "+id, av)
	r := AgentRecord{Version: d.num(attrV)}
	d.str(tables.AttrID)
	d.doc(&r.Agent)
	r.Agent.ID, r.Agent.Fleet = id, d.optStr(tables.AttrFleet)
	r.Push = Push{AckedHash: d.optStr(attrAckHash), AckedOffer: d.optStr(attrAckOffer)}
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

// AgentsByID reads the agents of a pass (eventually consistent: the engine
// judges reports that are seconds old anyway). Missing agents are absent
// from the map: they were deleted.
func (s *Store) AgentsByID(ctx context.Context, ids []string) (map[string]agent.Agent, error) {
	recs, err := s.agentRecords(ctx, ids, false)
	out := make(map[string]agent.Agent, len(recs))
	for id, r := range recs {
		out[id] = r.Agent
	}
	return out, err
}

func (s *Store) agentRecords(ctx context.Context, ids []string, consistent bool) (map[string]AgentRecord, error) {
	keys := make([]map[string]types.AttributeValue, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, agentKey(id))
		}
	}
	items, err := s.batchGetAll(ctx, s.names.Agents, keys, consistent)
	if err != nil {
		return nil, classify(err, "read agents")
	}
	out := make(map[string]AgentRecord, len(items))
	for _, av := range items {
		r, err := decodeAgent(av)
		if err != nil {
			return nil, err
		}
		out[r.ID] = r
	}
	return out, nil
}

// AgentsOfFleet is one page of a fleet's agents in id order: the ids from
// index byFleet (keys only), then the agents by id.
func (s *Store) AgentsOfFleet(ctx context.Context, fleetName, token string, limit int) (Page[AgentRecord], error) {
	start, err := decodeToken(token)
	if err != nil {
		return Page[AgentRecord]{}, err
	}
	out, err := s.query(ctx, &dynamodb.QueryInput{
		TableName: &s.names.Agents, IndexName: aws.String(tables.IndexByFleet), Limit: pageLimit(limit), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("#f = :f"),
		ExpressionAttributeNames:  map[string]string{"#f": tables.AttrFleet},
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": str(fleetName)},
	})
	if err != nil {
		return Page[AgentRecord]{}, classify(err, "query the agents of fleet "+fleetName)
	}
	ids := make([]string, len(out.Items))
	for i, av := range out.Items {
		ids[i] = keyOf(av, tables.AttrID)
	}
	recs, err := s.agentRecords(ctx, ids, false)
	if err != nil {
		return Page[AgentRecord]{}, err
	}
	p := Page[AgentRecord]{Next: encodeToken(out.LastEvaluatedKey)}
	for _, id := range ids {
		// An agent deleted or moved since the index was written is left out.
		if r, ok := recs[id]; ok && r.Fleet == fleetName {
			p.Items = append(p.Items, r)
		}
	}
	return p, nil
}

// lagToken is where a listing of the lagging index goes on: a shard and
// DynamoDB's key within it.
type lagToken struct {
	Shard int               `json:"s"`
	Key   map[string]string `json:"k,omitempty"`
}

// LaggingAgents pages through the agents the gateway has something to push
// to, shard by shard of the sparse index lagging (gateway.Agents). A page
// may hold fewer agents than limit while next is set.
func (s *Store) LaggingAgents(ctx context.Context, token string, limit int) ([]agent.Agent, string, error) {
	var at lagToken
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		if err == nil {
			err = json.Unmarshal(b, &at)
		}
		if err != nil || at.Shard < 0 || at.Shard >= tables.LagShards {
			return nil, "", fmt.Errorf("%w: %q", ErrBadPageToken, token)
		}
	}
	want := int(*pageLimit(limit))
	var page []agent.Agent
	for len(page) < want && at.Shard < tables.LagShards {
		var start map[string]types.AttributeValue
		for k, v := range at.Key {
			if start == nil {
				start = map[string]types.AttributeValue{}
			}
			start[k] = str(v)
		}
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Agents, IndexName: aws.String(tables.IndexLagging), Limit: aws.Int32(int32(want - len(page))),
			ExclusiveStartKey:         start,
			KeyConditionExpression:    aws.String("#l = :l"),
			ExpressionAttributeNames:  map[string]string{"#l": tables.AttrLag},
			ExpressionAttributeValues: map[string]types.AttributeValue{":l": str(strconv.Itoa(at.Shard))},
		})
		if err != nil {
			return nil, "", classify(err, "query the lagging agents")
		}
		for _, av := range out.Items {
			r, err := decodeAgent(av)
			if err != nil {
				return nil, "", err
			}
			page = append(page, r.Agent)
		}
		at.Key = nil
		if out.LastEvaluatedKey == nil {
			at.Shard++
			continue
		}
		at.Key = map[string]string{}
		for k, v := range out.LastEvaluatedKey {
			if sv, ok := v.(*types.AttributeValueMemberS); ok {
				at.Key[k] = sv.Value
			}
		}
	}
	if at.Shard >= tables.LagShards {
		return page, "", nil
	}
	b, _ := json.Marshal(at)
	return page, base64.RawURLEncoding.EncodeToString(b), nil
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
		for _, r := range p.Items {
			out = append(out, r.Agent)
		}
		if token = p.Next; token == "" {
			return out, nil
		}
	}
}

// putAgent writes r on the condition that the stored counter is still
// r.Version (absent for 0).
func (s *Store) putAgent(ctx context.Context, r AgentRecord) error {
	it, err := encodeAgent(r, r.Version+1)
	if err != nil {
		return fmt.Errorf("agent %s: %w", r.ID, err)
	}
	cond, names, values := versionCondition(tables.AttrID, r.Version)
	err = s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Agents, Item: it,
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	return classify(err, "write agent "+r.ID)
}

// versionCondition is the condition of a write that read counter v of an
// item: the item is absent (v = 0) or its counter is still v.
func versionCondition(keyAttr string, v int64) (string, map[string]string, map[string]types.AttributeValue) {
	if v == 0 {
		return "attribute_not_exists(#k)", map[string]string{"#k": keyAttr}, nil
	}
	return "#v = :v", map[string]string{"#v": attrV}, map[string]types.AttributeValue{":v": num(v)}
}

// agentAttempts bounds the re-reads of one agent after lost races.
const agentAttempts = 8

// updateAgent is the read-modify-write of one agent: change edits the
// record and reports whether anything changed; nothing is written
// otherwise. A missing agent is left missing (change is not called).
func (s *Store) updateAgent(ctx context.Context, id string, cur *AgentRecord, change func(*AgentRecord) bool) (bool, error) {
	for attempt := 0; attempt < agentAttempts; attempt++ {
		if cur == nil || attempt > 0 {
			var err error
			if cur, err = s.GetAgentRecord(ctx, id); err != nil || cur == nil {
				return false, err
			}
		}
		next := *cur
		if !change(&next) {
			return false, nil
		}
		err := s.putAgent(ctx, next)
		if !errors.Is(err, rollout.ErrConflict) {
			return err == nil, err
		}
	}
	return false, conflictf("write agent %s: %d attempts lost", id, agentAttempts)
}

// updateAgents applies change to many agents: one consistent batch read,
// then a conditional write per changed agent; an agent whose write loses a
// race is read again on its own. Agents that do not exist are skipped.
func (s *Store) updateAgents(ctx context.Context, ids []string, change func(*AgentRecord) bool) error {
	recs, err := s.agentRecords(ctx, ids, true)
	if err != nil {
		return err
	}
	list := make([]AgentRecord, 0, len(recs))
	for _, r := range recs {
		list = append(list, r)
	}
	return forEach(ctx, len(list), workers, func(ctx context.Context, i int) error {
		_, err := s.updateAgent(ctx, list[i].ID, &list[i], change)
		return err
	})
}

// SetDesiredHash sets the configuration the agents should run (the planner
// for bootstrap and catch-up, the engine for started targets). Agents that
// already have it are not written.
func (s *Store) SetDesiredHash(ctx context.Context, ids []string, hash string) error {
	return s.updateAgents(ctx, ids, func(r *AgentRecord) bool {
		if r.DesiredHash == hash {
			return false
		}
		r.DesiredHash = hash
		return true
	})
}

// SetAgentTargetVersions writes the effective target version per agent.
func (s *Store) SetAgentTargetVersions(ctx context.Context, versions map[string]string) error {
	ids := make([]string, 0, len(versions))
	for id := range versions {
		ids = append(ids, id)
	}
	return s.updateAgents(ctx, ids, func(r *AgentRecord) bool {
		v := versions[r.ID]
		if r.TargetVersion == v {
			return false
		}
		r.TargetVersion = v
		return true
	})
}

// SetPackageOffer records the version the updater executor wants offered
// to the agent ("" withdraws the offer). It implements executor.Offers.
func (s *Store) SetPackageOffer(ctx context.Context, agentID, version string) error {
	found := false
	_, err := s.updateAgent(ctx, agentID, nil, func(r *AgentRecord) bool {
		found = true
		if r.PackageOffer == version {
			return false
		}
		r.PackageOffer = version
		return true
	})
	if err == nil && !found {
		return fmt.Errorf("offer %q to agent %s: the agent does not exist", version, agentID)
	}
	return err
}

// AckPush records what the gateway delivered to the agent: the desired hash
// and the package offer it sent and the agent acknowledged ("" leaves a
// field as it is). The agent leaves the lagging index when nothing is left.
func (s *Store) AckPush(ctx context.Context, agentID, hash, offer string) error {
	_, err := s.updateAgent(ctx, agentID, nil, func(r *AgentRecord) bool {
		before := r.Push
		if hash != "" {
			r.Push.AckedHash = hash
		}
		if offer != "" {
			r.Push.AckedOffer = offer
		}
		return r.Push != before
	})
	return err
}

// SetAgentFleet assigns the agent to a fleet ("" for none) (api.AgentAssigner).
func (s *Store) SetAgentFleet(ctx context.Context, agentID, fleetName string) error {
	found := false
	_, err := s.updateAgent(ctx, agentID, nil, func(r *AgentRecord) bool {
		found = true
		if r.Fleet == fleetName {
			return false
		}
		r.Fleet = fleetName
		return true
	})
	if err == nil && !found {
		return fmt.Errorf("assign agent %s to fleet %q: the agent does not exist", agentID, fleetName)
	}
	return err
}

// MarkOffline records that the agent's connection closed at at, unless it
// connected again after connectedAt (a newer connection, perhaps to another
// gateway task, owns it then) or is offline already (gateway.Agents).
func (s *Store) MarkOffline(ctx context.Context, agentID string, connectedAt, at time.Time) error {
	_, err := s.updateAgent(ctx, agentID, nil, func(r *AgentRecord) bool {
		if !r.Online || r.ConnectedAt.After(connectedAt) {
			return false
		}
		r.Online = false
		if at.After(r.LastSeen) {
			r.LastSeen = at.UTC()
		}
		return true
	})
	return err
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
