package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/rollout"
)

// The targeted pass of an agent event (enginetask.Passer.PassAgents) reads
// and writes only the targets of the agents that reported, so that a wave
// of 1,000 reports is not 1,000 reads of every target.

// TargetsOf reads the targets of the given agents in rollout r (strongly
// consistent), in the waves that can hold a target in flight: running and
// failed ones. The key of a target names its wave, so each agent is asked
// once per such wave; with one running wave that is one key per agent.
// Agents without a target there are absent.
func (s *Store) TargetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string) ([]rollout.Target, error) {
	var keys []map[string]types.AttributeValue
	seen := make(map[string]bool, len(agentIDs))
	for _, w := range r.Waves {
		if w.Status != rollout.WaveRunning && w.Status != rollout.WaveFailed {
			continue
		}
		for _, id := range agentIDs {
			if k := wavePrefix(w.Index) + id; !seen[k] {
				seen[k] = true
				keys = append(keys, targetKey(r.ID, w.Index, id))
			}
		}
	}
	items, err := s.batchGetAll(ctx, s.names.Targets, keys, true)
	if err != nil {
		return nil, classify(err, "read targets of rollout "+r.ID)
	}
	ts := make([]rollout.Target, 0, len(items))
	for _, av := range items {
		t, err := decodeTarget(av)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// SaveTargets writes targets that a targeted pass changed, each on the
// condition of its version, and checks that the rollout is still at r's
// version without changing it: a pass of the whole rollout, an action or a
// rollback stored meanwhile makes the targeted pass read again, while
// targeted passes of other agents never conflict with each other. The
// targets go in transactions of up to 99 with that check; a lost race
// returns an error wrapping rollout.ErrConflict, and the transactions
// before it stay stored (each target's change stands on its own).
func (s *Store) SaveTargets(ctx context.Context, r rollout.Rollout, changed []rollout.Target) error {
	check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.names.Rollouts, Key: idKey(r.ID),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": attrV},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(r.Version)}}}
	puts, err := s.targetPuts(r, changed)
	if err != nil {
		return fmt.Errorf("save targets of rollout %s: %w", r.ID, err)
	}
	for i := 0; i < len(puts); i += maxTransactItems - 1 {
		chunk := puts[i:min(i+maxTransactItems-1, len(puts))]
		if err := s.transact(ctx, append(chunk[:len(chunk):len(chunk)], check)); err != nil {
			return classify(err, fmt.Sprintf("save targets of rollout %s (%d of %d stored)", r.ID, i, len(changed)))
		}
	}
	return nil
}
