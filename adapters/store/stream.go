package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
)

// DecodeAgentImage decodes an agent item as the agents table's stream
// carries it (its new image), with the same strict rules as a read, and
// what the write changed as its writer stamped it (written.go; Stamped
// false for an item of an older build).
func DecodeAgentImage(av map[string]types.AttributeValue) (agent.Agent, agent.Written, error) {
	rec, err := decodeAgent(av)
	if err != nil {
		return agent.Agent{}, agent.Written{}, err
	}
	d := newDecoder("agent "+rec.ID, av)
	w := writtenOf(d)
	return rec.Agent, w, d.err
}

// ActiveRolloutID names the rollout that holds the lock of a fleet and kind
// (one strongly consistent GetItem), or "" when none does. Unlike
// ActiveRollout it reads no target: the agent-event path only needs the id.
func (s *Store) ActiveRolloutID(ctx context.Context, fleet string, k policy.Kind) (string, error) {
	id := lockID(fleet, k)
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Rollouts, Key: idKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return "", classify(err, "get "+id)
	}
	d := newDecoder("lock "+id, av)
	holder := d.str(tables.AttrRolloutID)
	return holder, d.err
}
