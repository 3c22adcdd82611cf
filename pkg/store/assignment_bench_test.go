package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/assignment"
	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/selector"
)

// BenchmarkBackstop_100kAgents is the assignment backstop of the planner's
// minute over 100,000 agents of which 10 are still pending (an event was
// lost): what one run reads and writes. It reads the sparse assignment
// index (8 shard queries) and only the pending agents, never the table.
// Seeding writes the items directly (batches) and is not measured.
func BenchmarkBackstop_100kAgents(b *testing.B) {
	s := newStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const n, pending = 100_000, 10
	reqs := make([]types.WriteRequest, 0, n)
	for i := 0; i < n; i++ {
		r := AgentRecord{Agent: agent.Agent{ID: fmt.Sprintf("a%06d", i), Fleet: "edge", Online: true,
			Attributes: map[string]string{"labels.fleet": "edge", "host.name": fmt.Sprintf("h%06d", i)}}, AssignedRev: 1}
		if i < pending {
			r.Fleet, r.AssignPending = "", true
		}
		it, err := encodeAgent(r, 1)
		must(b, err)
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	const chunk = 2500
	must(b, forEach(ctx, n/chunk, workers, func(ctx context.Context, i int) error {
		return s.batchWriteAll(ctx, s.names.Agents, reqs[i*chunk:(i+1)*chunk])
	}))
	fleets := []fleet.Fleet{{Name: "edge", Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": "edge"}}, Config: fleet.Config{Hash: "h1"}}}
	store := fixedFleets{Store: s, fleets: fleets}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ResetUsage()
		assigned, touched, err := assignment.Runner{Store: store}.Backstop(ctx)
		must(b, err)
		u := s.Usage()
		if i == 0 && (assigned != pending || len(touched) != 1) {
			b.Fatalf("assigned %d (fleets %v), want the %d pending agents in fleet edge", assigned, touched, pending)
		}
		b.ReportMetric(float64(u.Requests), "requests")
		b.ReportMetric(float64(u.ItemsRead), "items-read")
		b.ReportMetric(float64(u.ItemsWritten), "items-written")
		b.ReportMetric(u.ReadUnits, "RCU")
	}
}

// fixedFleets serves fleets without an applied revision in the table.
type fixedFleets struct {
	*Store
	fleets []fleet.Fleet
}

func (f fixedFleets) AppliedFleets(context.Context) ([]fleet.Fleet, int64, error) {
	return f.fleets, 1, nil
}
