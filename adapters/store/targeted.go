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
// Each such wave is read whole with a Query when it is small next to the
// agents asked for (waveQueryLimit), and by key past that: a target item is
// about half a kilobyte, so a Query of 8 targets costs one read unit like a
// read of one by key, and one Query is one request where a read by key is
// one per 100. DynamoDB Local serves a Query of 1,000 targets in about
// 40 ms while a wave's agent writes are under way, and 100 reads by key in
// about 500 ms (docs/scale.md), which held every report of a wave of 1,000
// back by a second.
func (s *Store) TargetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string) ([]rollout.Target, error) {
	return s.targetsOf(ctx, r, agentIDs, minWaveQuery)
}

// minWaveQuery is the fewest targets of a wave that TargetsOf reads with a
// Query: one page of about half a megabyte, 125 read units, next to 100 for
// the same batch read by key.
const minWaveQuery = 1000

// waveQueryLimit is the most targets of a wave that TargetsOf reads with a
// Query for n agents: 8 per agent (as many read units as reading each by
// key), and at least minimum.
func waveQueryLimit(n, minimum int) int { return max(8*n, minimum) }

func (s *Store) targetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string, minimum int) ([]rollout.Target, error) {
	ids := slices.Compact(slices.Sorted(slices.Values(agentIDs)))
	var ts []rollout.Target
	for _, w := range r.Waves {
		if w.Status != rollout.WaveRunning && w.Status != rollout.WaveFailed {
			continue
		}
		got, err := s.waveTargetsOf(ctx, r.ID, w.Index, ids, waveQueryLimit(len(ids), minimum))
		if err != nil {
			return nil, err
		}
		ts = append(ts, got...)
	}
	return ts, nil
}

// waveTargetsOf reads the targets of the agents ids (sorted, distinct) in
// one wave: up to limit targets of the wave in key order with Queries, then
// by key those of the agents past the last target read (the Queries saw
// every target up to it).
func (s *Store) waveTargetsOf(ctx context.Context, rolloutID string, wave int, ids []string, limit int) ([]rollout.Target, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var out []rollout.Target
	read, last, token := 0, "", ""
	for {
		p, err := s.targetPage(ctx, rolloutID, wave, token, min(limit-read, 1000), true)
		if err != nil {
			return nil, err
		}
		for _, t := range p.Items {
			if want[t.AgentID] {
				out = append(out, t)
			}
			last = t.AgentID
		}
		read += len(p.Items)
		if token = p.Next; token == "" {
			return out, nil // the whole wave
		}
		if read >= limit {
			break
		}
	}
	var keys []map[string]types.AttributeValue
	for _, id := range ids {
		if id > last {
			keys = append(keys, targetKey(rolloutID, wave, id))
		}
	}
	items, err := s.batchGetAll(ctx, s.names.Targets, keys, true)
	if err != nil {
		return nil, classify(err, "read targets of rollout "+rolloutID)
	}
	for _, av := range items {
		t, err := decodeTarget(av)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
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
