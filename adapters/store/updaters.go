package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
)

// maxUpdatersPerCollector bounds what is read of the updaters that name one
// collector: one is the rule, a few happen while a host is reinstalled.
const maxUpdatersPerCollector = 10

// LinkedUpdaters finds the myriarch-updater of each collector id: the ids
// from the sparse index byCollector (keys only; a link is written once, when
// the updater first reports), then the updaters themselves, read
// consistently, so that a pass woken by an updater's report sees that
// report. Collectors without an updater are absent. When several updaters
// name one collector, the one that serves it is agent.PickUpdater's.
func (s *Store) LinkedUpdaters(ctx context.Context, collectorIDs []string) (map[string]agent.Agent, error) {
	byCollector := map[string][]string{}
	var ids []string
	for _, c := range collectorIDs {
		if _, done := byCollector[c]; done {
			continue
		}
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Agents, IndexName: aws.String(tables.IndexByCollector), Limit: aws.Int32(maxUpdatersPerCollector),
			KeyConditionExpression:    aws.String("#c = :c"),
			ExpressionAttributeNames:  map[string]string{"#c": tables.AttrCollector},
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": str(c)},
		})
		if err != nil {
			return nil, classify(err, fmt.Sprintf("query the updaters of collector %s", c))
		}
		byCollector[c] = nil
		for _, av := range out.Items {
			id := keyOf(av, tables.AttrID)
			byCollector[c] = append(byCollector[c], id)
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return map[string]agent.Agent{}, nil
	}
	recs, err := s.agentRecords(ctx, ids, true)
	if err != nil {
		return nil, err
	}
	out := map[string]agent.Agent{}
	for c, us := range byCollector {
		var candidates []agent.Agent
		for _, id := range us {
			// the index lags a changed link: only an updater that still names c serves it
			if r, ok := recs[id]; ok && r.LinkedCollector() == c {
				candidates = append(candidates, r.Agent)
			}
		}
		if u, ok := agent.PickUpdater(candidates); ok {
			out[c] = u
		}
	}
	return out, nil
}
