package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/store/tables"
)

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

// lagShard spreads the lagging index over tables.LagShards partition keys
// by a hash of the agent id.
func lagShard(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return strconv.Itoa(int(h.Sum32() % tables.LagShards))
}
