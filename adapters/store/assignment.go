package store

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
)

var _ assignment.Store = (*Store)(nil)

// AppliedFleets are the fleets of the applied revision and the revision
// pointer's counter, which orders assignments (0 before the first apply).
func (s *Store) AppliedFleets(ctx context.Context) ([]fleet.Fleet, int64, error) {
	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur == nil {
		return nil, 0, err
	}
	fleets, err := s.fleetsAt(ctx, cur.Commit)
	return fleets, cur.Version, err
}

// AssignAgent decides the agent's assignment from its stored view (read
// again after a lost race) and writes it with the revision counter rev. A
// stored assignment of a newer revision is left as it is. The agent leaves
// the assignment index's pending part; with an assignment error it stays
// in its error part. Nothing is written when nothing changes.
func (s *Store) AssignAgent(ctx context.Context, id string, rev int64, decide func(agent.Agent) assignment.Outcome) (before, after agent.Agent, changed bool, err error) {
	changed, err = s.updateAgent(ctx, id, nil, func(r *AgentRecord) bool {
		before = r.Agent
		next, ch := assignDecision(*r, rev, decide)
		*r, after = next, next.Agent
		return ch
	})
	return before, after, changed, err
}

// PendingAssignments lists the agents whose assignment must still be
// computed: Query assignState = pending#<shard> on the sparse assignment
// index, shard by shard, ids only. An empty index costs 8 small queries.
func (s *Store) PendingAssignments(ctx context.Context) ([]string, error) {
	var ids []string
	for shard := 0; shard < tables.LagShards; shard++ {
		var start map[string]types.AttributeValue
		for {
			out, err := s.query(ctx, &dynamodb.QueryInput{
				TableName: &s.names.Agents, IndexName: aws.String(tables.IndexAssignment), ExclusiveStartKey: start,
				KeyConditionExpression:    aws.String("#s = :s"),
				ProjectionExpression:      aws.String("#id"),
				ExpressionAttributeNames:  map[string]string{"#s": tables.AttrAssignState, "#id": tables.AttrID},
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": str(assignPendingPrefix + strconv.Itoa(shard))},
			})
			if err != nil {
				return nil, classify(err, "query the pending assignments")
			}
			for _, av := range out.Items {
				ids = append(ids, keyOf(av, tables.AttrID))
			}
			if start = out.LastEvaluatedKey; start == nil {
				break
			}
		}
	}
	return ids, nil
}
