package store

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/page"
)

// The operators' inventory of agents (GET /api/v1/agents). Each listing
// reads one source, the cheapest that holds every agent the caller wants:
// a fleet's agents through byFleet (AgentsOfFleet), the agents with an
// assignment error through the sparse assignment index, everything else
// by a Scan. The API filters each page further, so its pages may be short.

// AgentsPage is one page of every agent, assigned or not: a Scan of the
// table, Limit items per call. Pages come in the table's order (by hash
// of the id, not sorted); each page is sorted by id. A token of another
// listing is page.ErrBadToken.
func (s *Store) AgentsPage(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	start, err := decodeTokenOf(token, tables.AttrID)
	if err != nil {
		return page.Page[agent.Agent]{}, err
	}
	out, err := s.scan(ctx, &dynamodb.ScanInput{TableName: &s.names.Agents, Limit: pageLimit(limit), ExclusiveStartKey: start})
	if err != nil {
		return page.Page[agent.Agent]{}, classify(badStartKey(err, start), "scan the agents")
	}
	return agentPage(out.Items, out.LastEvaluatedKey)
}

// AgentsWithAssignmentError is one page of the agents that fleets select
// but that belong to none (AssignmentError set), in id order: a Query of
// the sparse assignment index (assignState = "error"), which projects whole
// items. Eventually consistent, like every index: an error resolved a
// moment ago may still be listed. An agent whose fleet is being computed
// again (assignState pending#<shard>) is not listed until the computation
// has decided, whatever error it had before.
func (s *Store) AgentsWithAssignmentError(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	start, err := decodeToken(token)
	if err != nil {
		return page.Page[agent.Agent]{}, err
	}
	out, err := s.query(ctx, &dynamodb.QueryInput{
		TableName: &s.names.Agents, IndexName: aws.String(tables.IndexAssignment), Limit: pageLimit(limit), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("#s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": tables.AttrAssignState},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": str(assignError)},
	})
	if err != nil {
		return page.Page[agent.Agent]{}, classify(err, "query the agents with an assignment error")
	}
	return agentPage(out.Items, out.LastEvaluatedKey)
}

// AgentsByName finds the agents whose display name is name, in id order,
// at most limit of them (1 to 1000; 0: DefaultPageSize): the ids from index
// byName (keys only), then the agents by id. The index lags a rename, so an
// agent is returned only while its name is still name. Several agents may
// share a name (two hosts called localhost); the caller decides what that
// means.
func (s *Store) AgentsByName(ctx context.Context, name string, limit int) ([]agent.Agent, error) {
	want := int(*pageLimit(limit))
	var ids []string
	var start map[string]types.AttributeValue
	for len(ids) < want {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Agents, IndexName: aws.String(tables.IndexByName), Limit: aws.Int32(int32(want - len(ids))),
			ExclusiveStartKey:         start,
			KeyConditionExpression:    aws.String("#n = :n"),
			ExpressionAttributeNames:  map[string]string{"#n": tables.AttrName},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": str(name)},
		})
		if err != nil {
			return nil, classify(err, fmt.Sprintf("query the agents named %q", name))
		}
		for _, av := range out.Items {
			ids = append(ids, keyOf(av, tables.AttrID))
		}
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	recs, err := s.agentRecords(ctx, ids, false)
	if err != nil {
		return nil, err
	}
	var out []agent.Agent
	for _, id := range ids { // the index's order: by id
		if r, ok := recs[id]; ok && r.DisplayName() == name {
			out = append(out, r.Agent)
		}
	}
	return out, nil
}

// agentPage decodes the items of one page, sorted by id: the agents
// without what only the store needs (pushes, assignment state, counter).
func agentPage(items []map[string]types.AttributeValue, last map[string]types.AttributeValue) (page.Page[agent.Agent], error) {
	p := page.Page[agent.Agent]{Items: make([]agent.Agent, 0, len(items)), Next: encodeToken(last)}
	for _, av := range items {
		r, err := decodeAgent(av)
		if err != nil {
			return page.Page[agent.Agent]{}, err
		}
		p.Items = append(p.Items, r.Agent)
	}
	sort.Slice(p.Items, func(i, j int) bool { return p.Items[i].ID < p.Items[j].ID })
	return p, nil
}

// decodeTokenOf is decodeToken for a listing whose start key has exactly
// the attributes names. A Scan, unlike a Query, does not refuse every key
// that it did not issue, and a token of another listing must not start it
// somewhere arbitrary.
func decodeTokenOf(token string, names ...string) (map[string]types.AttributeValue, error) {
	key, err := decodeToken(token)
	if err != nil || key == nil {
		return key, err
	}
	if len(key) != len(names) {
		return nil, fmt.Errorf("%w: %q", page.ErrBadToken, token)
	}
	for _, n := range names {
		if _, ok := key[n]; !ok {
			return nil, fmt.Errorf("%w: %q", page.ErrBadToken, token)
		}
	}
	return key, nil
}
