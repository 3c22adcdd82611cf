package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/rollout"
)

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
		next := edit(*cur)
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
// then the changed agents written in transactions of up to 100 conditional
// puts and maxTransactBytes, each on the counter it read (conditionalPut).
// A chunk that loses a race is written again agent by agent, each agent
// read again on its own after a lost race. Agents that do not exist are
// skipped.
func (s *Store) updateAgents(ctx context.Context, ids []string, change func(*AgentRecord) bool) error {
	recs, err := s.agentRecords(ctx, ids, true)
	if err != nil {
		return err
	}
	return s.writeAgents(ctx, recs, change)
}

// writeAgents applies change to records read before and writes the changed
// ones as updateAgents does, each on the counter it was read with.
func (s *Store) writeAgents(ctx context.Context, recs map[string]AgentRecord, change func(*AgentRecord) bool) error {
	var cur, next []AgentRecord // as read, as changed
	var items []types.TransactWriteItem
	var sizes []int
	for _, r := range recs {
		n := edit(r)
		if !change(&n) {
			continue
		}
		it, size, err := s.conditionalPut(n)
		if err != nil {
			return err
		}
		cur, next, items, sizes = append(cur, r), append(next, n), append(items, it), append(sizes, size)
	}
	bounds := chunkBounds(sizes, maxTransactItems, maxTransactBytes)
	return forEach(ctx, len(bounds)-1, agentChunkWorkers, func(ctx context.Context, c int) error {
		lo, hi := bounds[c], bounds[c+1]
		err := classify(s.transact(ctx, items[lo:hi]), fmt.Sprintf("write %d agents", hi-lo))
		if !errors.Is(err, rollout.ErrConflict) {
			return err
		}
		return forEach(ctx, hi-lo, agentWriteWorkers, func(ctx context.Context, i int) error {
			_, err := s.updateAgent(ctx, cur[lo+i].ID, &cur[lo+i], change)
			return err
		})
	})
}

// agentChunkWorkers bounds the transactions of one updateAgents call in
// flight: a wave of 1,000 targets is 10 transactions of 100 agents.
//
// One transaction of 100 puts instead of 100 single writes: DynamoDB Local
// spends most of a write on the request (docs/scale.md, "A wave of 1,000":
// about 1,000 single conditional writes a second whatever the concurrency),
// so the desired hashes of a wave are stored, and pushed, several times
// sooner. In AWS a transactional write costs twice the write units of a
// plain one, which the engine pays once per started target.
const agentChunkWorkers = 4

// conditionalPut is the transaction's put of a changed agent record, on
// the condition that its stored counter is still the one it was read with
// (r.Version): a lost race of any put of a transaction stores none, and the
// transaction's error wraps rollout.ErrConflict. size is the item's size as
// DynamoDB counts it.
func (s *Store) conditionalPut(r AgentRecord) (it types.TransactWriteItem, size int, err error) {
	item, err := encodeAgent(r, r.Version+1)
	if err != nil {
		return it, 0, fmt.Errorf("agent %s: %w", r.ID, err)
	}
	cond, names, values := versionCondition(tables.AttrID, r.Version)
	return types.TransactWriteItem{Put: &types.Put{TableName: &s.names.Agents, Item: item,
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}}, itemBytes(item), nil
}

// maxTransactBytes bounds the items of one agents transaction: DynamoDB
// refuses a transaction of more than 4 MB, and an agent item with many
// attributes can weigh hundreds of KB, so 100 of them may not fit.
const maxTransactBytes = 3 << 20

// chunkBounds cuts items of the given sizes, in order, into chunks of at
// most maxItems items and maxBytes bytes (an item larger than maxBytes is a
// chunk of its own). It returns the chunks' bounds: chunk c is
// [b[c], b[c+1]).
func chunkBounds(sizes []int, maxItems, maxBytes int) []int {
	bounds := []int{0}
	n, bytes := 0, 0
	for i, size := range sizes {
		if n > 0 && (n == maxItems || bytes+size > maxBytes) {
			bounds = append(bounds, i)
			n, bytes = 0, 0
		}
		n, bytes = n+1, bytes+size
	}
	if n > 0 {
		bounds = append(bounds, len(sizes))
	}
	return bounds
}

// itemBytes is the size of an item as DynamoDB counts it against its limits:
// each attribute's name and value, numbers taken as their digits, and a
// few bytes for each list or map.
func itemBytes(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueBytes(v)
	}
	return n
}

func valueBytes(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + itemBytes(v.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueBytes(e)
		}
		return n
	default: // BOOL, NULL, and the sets no agent item holds
		return 1
	}
}

// SetDesiredHash sets the configuration the agents should run (the planner
// for bootstrap and catch-up, the engine for started targets). Agents that
// already have it are not written.
func (s *Store) SetDesiredHash(ctx context.Context, ids []string, hash string) error {
	return s.updateAgents(ctx, ids, desiredHash(hash))
}

// desiredHash is the change of an agent's desired hash to hash.
func desiredHash(hash string) func(*AgentRecord) bool {
	return func(r *AgentRecord) bool {
		if r.DesiredHash == hash {
			return false
		}
		r.DesiredHash, r.desiredOnly = hash, true
		return true
	}
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
		r.TargetVersion, r.desiredOnly = v, true
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
		r.PackageOffer, r.desiredOnly = version, true
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
