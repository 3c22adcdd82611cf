package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/selector"
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
	seedAgents(b, ctx, s, n, func(i int) AgentRecord {
		r := AgentRecord{Agent: agent.Agent{ID: fmt.Sprintf("a%06d", i), Fleet: "edge", Online: true,
			Attributes: map[string]string{"labels.fleet": "edge", "host.name": fmt.Sprintf("h%06d", i)}}, AssignedRev: 1}
		if i < pending {
			r.Fleet, r.AssignPending = "", true
		}
		return r
	})
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

// BenchmarkSweep_100kAgents is the assignment sweep of a revision applied
// over 100,000 agents of which 10,000 change fleet: what the whole sweep
// reads and writes, and how long it takes, whoever runs its pages (the
// apply request, then the planner's minutes). Run it once
// (-benchtime=1x): the agents it moved stay moved. Seeding is not measured.
func BenchmarkSweep_100kAgents(b *testing.B) {
	s := newStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	const n, moving = 100_000, 10_000
	seedAgents(b, ctx, s, n, func(i int) AgentRecord {
		label := "edge"
		if i%(n/moving) == 0 {
			label = "lab" // a revision moved these from edge to lab
		}
		return AgentRecord{Agent: agent.Agent{ID: fmt.Sprintf("a%06d", i), Fleet: "edge", Online: true, DesiredHash: "h-edge",
			Attributes: map[string]string{"labels.fleet": label, "host.name": fmt.Sprintf("h%06d", i)}}, AssignedRev: 1}
	})
	store := currentFleets{Store: s, fleets: sweepFleets()}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		must(b, s.PutRevision(ctx, rev(fmt.Sprintf("c%d", i)), time.Unix(0, 0)))
		s.ResetUsage()
		b.StartTimer()
		start := time.Now()
		res, err := assignment.Runner{Store: store, Clock: time.Now}.Sweep(ctx, time.Now().Add(time.Hour))
		must(b, err)
		elapsed := time.Since(start)
		u := s.Usage()
		if i == 0 && (!res.Done || res.Scanned != n || res.Moved != moving) {
			b.Fatalf("sweep %+v, want done over %d agents, %d moved", res.Fields(), n, moving)
		}
		b.ReportMetric(float64(u.Requests), "requests")
		b.ReportMetric(float64(u.ItemsRead), "items-read")
		b.ReportMetric(float64(u.ItemsWritten), "items-written")
		b.ReportMetric(u.ReadUnits, "RCU")
		b.ReportMetric(u.WriteUnits, "WCU")
		b.ReportMetric(elapsed.Seconds(), "s/sweep")
		b.ReportMetric(float64(res.Scanned)/elapsed.Seconds(), "agents/s")
	}
}

// currentFleets serves fixed fleets at the revision pointer's counter.
type currentFleets struct {
	*Store
	fleets []fleet.Fleet
}

func (f currentFleets) AppliedFleets(ctx context.Context) ([]fleet.Fleet, int64, error) {
	cur, err := f.CurrentRevision(ctx)
	if err != nil || cur == nil {
		return nil, 0, err
	}
	return f.fleets, cur.Version, nil
}

// seedAgents writes the records record(0) to record(n-1) directly, in
// concurrent batches; benchmarks do not measure it.
func seedAgents(b *testing.B, ctx context.Context, s *Store, n int, record func(int) AgentRecord) {
	b.Helper()
	reqs := make([]types.WriteRequest, 0, n)
	for i := 0; i < n; i++ {
		it, err := encodeAgent(record(i), 1)
		must(b, err)
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	const chunk = 2500
	must(b, forEach(ctx, (n+chunk-1)/chunk, workers, func(ctx context.Context, i int) error {
		return s.batchWriteAll(ctx, s.names.Agents, reqs[i*chunk:min((i+1)*chunk, n)])
	}))
}
