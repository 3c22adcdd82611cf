package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
)

// SaveAgents is SaveAgent for many agents at once (gateway.BatchSaver): a
// gateway task whose writes queue up (a wave's reports, a connect storm)
// hands over what is queued. The agents with a version go in conditional
// transactions of up to 100 puts and 3 MB, each put on the version its
// session holds, several transactions at a time; DynamoDB Local stores 2-4
// times more items a second that way than in single writes (make
// ddbwrites), and in AWS a transactional write costs two write units
// instead of one. An agent of a transaction that failed (its own condition,
// another's, a conflict) is then written alone as SaveAgent does, which
// reads and merges after a lost race, as is an agent without a version. One
// agent is one plain write, and a batch that names an agent twice is
// written one by one, in order.
func (s *Store) SaveAgents(ctx context.Context, as []agent.Agent, vs []any) ([]any, []error) {
	next, errs := make([]any, len(as)), make([]error, len(as))
	if len(as) == 1 || twice(as) {
		for i := range as {
			next[i], errs[i] = s.SaveAgent(ctx, as[i], vs[i])
		}
		return next, errs
	}
	var batch []int
	var recs []AgentRecord
	var items []types.TransactWriteItem
	var sizes []int
	for i, a := range as {
		prev, ok := vs[i].(*AgentVersion)
		if !ok || prev == nil {
			next[i], errs[i] = s.SaveAgent(ctx, a, vs[i])
			continue
		}
		r := overVersion(a, prev)
		it, err := encodeAgent(r, r.Version+1)
		if err != nil {
			next[i], errs[i] = vs[i], fmt.Errorf("agent %s: %w", r.ID, err)
			continue
		}
		cond, names, values := versionCondition(tables.AttrID, r.Version)
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.names.Agents, Item: it,
			ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}})
		batch, recs, sizes = append(batch, i), append(recs, r), append(sizes, itemBytes(it))
	}
	bounds := chunkBounds(sizes, maxTransactItems, maxTransactBytes)
	_ = forEach(ctx, len(bounds)-1, workers, func(ctx context.Context, c int) error {
		lo, hi := bounds[c], bounds[c+1]
		if err := s.transact(ctx, items[lo:hi]); err != nil {
			for k := lo; k < hi; k++ {
				i := batch[k]
				next[i], errs[i] = s.SaveAgent(ctx, as[i], vs[i])
			}
			return nil
		}
		for k := lo; k < hi; k++ {
			next[batch[k]] = versionWritten(recs[k])
		}
		return nil
	})
	return next, errs
}

func twice(as []agent.Agent) bool {
	seen := make(map[string]bool, len(as))
	for _, a := range as {
		if seen[a.ID] {
			return true
		}
		seen[a.ID] = true
	}
	return false
}
