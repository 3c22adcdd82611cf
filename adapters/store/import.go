package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/core/agent"
)

// ImportAgents stores agents that the tables do not hold yet, as given,
// each as RecordAgent creates an agent on its first report (to be assigned
// to its fleet), in unconditional batch writes of 25: a benchmark's fleet
// of 100,000 is stored in a minute instead of the 200,000 requests of
// first reports. An agent that is stored already is overwritten whole, so
// it is for empty tables (benchmarks, an import before the gateway runs),
// never for agents the gateway may be writing.
func (s *Store) ImportAgents(ctx context.Context, as []agent.Agent) error {
	puts := make([]types.WriteRequest, len(as))
	for i, a := range as {
		it, err := encodeAgent(AgentRecord{Agent: utcAgent(a), AssignPending: true}, 1)
		if err != nil {
			return fmt.Errorf("import agent %s: %w", a.ID, err)
		}
		puts[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	return classify(s.batchWriteAll(ctx, s.names.Agents, puts), "import agents")
}
