package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/core/rollout"
)

// The targeted evaluation of an agent event (enginetask.Evaluator.EvaluateAgents) reads
// and writes only the targets of the agents that reported, so that a wave
// of 1,000 reports is not 1,000 reads of every target.

// TargetsOf reads the targets of the given agents in rollout r (strongly
// consistent), in the waves that can hold a target in flight: running and
// failed ones. Agents without a target there are absent.
//
// They are read by key, 100 to a request: a batch reads its own targets
// and no other. A Query of the wave read a wave of 1,000 for every batch
// of reports, 6 KB per decided report where reading its own target costs
// one item (docs/scale.md, "Reads per decided report"); DynamoDB Local
// answers a Query faster than as many reads by key, but that is the
// emulator's time, not what a read costs.
func (s *Store) TargetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string) ([]rollout.Target, error) {
	ids := slices.Compact(slices.Sorted(slices.Values(agentIDs)))
	var keys []map[string]types.AttributeValue
	for _, w := range r.Waves {
		if w.Status != rollout.WaveRunning && w.Status != rollout.WaveFailed {
			continue
		}
		for _, id := range ids {
			keys = append(keys, targetKey(r.ID, w.Index, id))
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

// SaveTargets writes targets that a targeted evaluation changed, each on the
// condition of its version, and checks that the rollout is still at r's
// version without changing it: an evaluation of the whole rollout, an action or a
// rollback stored meanwhile makes the targeted evaluation read again, while
// targeted evaluations of other agents never conflict with each other. The
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
