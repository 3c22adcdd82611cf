package store

import (
	"context"
	"hash/fnv"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
)

// LaggingAgents pages through the agents the gateway has something to push
// to (gateway.Agents): a Scan of the sparse index lagging, which holds those
// agents alone. The gateway polls it every second, mostly to learn that it
// is empty; one Scan answers that in one request, where a Query per shard
// of the index took tables.LagShards requests (and their CPU in every
// gateway task) each second. The shards still spread the index's writes
// over partition keys when a wave makes thousands of agents lag at once.
// A page may hold fewer agents than limit while next is set (a Scan of an
// index split over several partitions may even return an empty page with
// next set); the order is DynamoDB's. The index projects whole items, so
// each agent comes with its version (*AgentVersion, ordered by its counter):
// the gateway takes a listed desired state that is newer than what its
// session holds without reading the agent again.
func (s *Store) LaggingAgents(ctx context.Context, token string, limit int) ([]agent.Agent, []any, string, error) {
	start, err := decodeToken(token)
	if err != nil {
		return nil, nil, "", err
	}
	out, err := s.scan(ctx, &dynamodb.ScanInput{
		TableName: &s.names.Agents, IndexName: aws.String(tables.IndexLagging),
		Limit: pageLimit(limit), ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, nil, "", classify(badStartKey(err, start), "scan the lagging agents")
	}
	page, versions := make([]agent.Agent, 0, len(out.Items)), make([]any, 0, len(out.Items))
	for _, av := range out.Items {
		r, err := decodeAgent(av)
		if err != nil {
			return nil, nil, "", err
		}
		page, versions = append(page, r.Agent), append(versions, versionOf(r))
	}
	return page, versions, encodeToken(out.LastEvaluatedKey), nil
}

// lagShard spreads the lagging index over tables.LagShards partition keys
// by a hash of the agent id.
func lagShard(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return strconv.Itoa(int(h.Sum32() % tables.LagShards))
}
