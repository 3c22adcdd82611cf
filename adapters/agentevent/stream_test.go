package agentevent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"

	"github.com/myriarch/myriarch/adapters/agentevent"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/local/storetest"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

type recordingEvaluator struct {
	mu  sync.Mutex
	ids []string
}

func (p *recordingEvaluator) EvaluateAgents(_ context.Context, id string, _ []string, _ map[string]agent.Agent) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = append(p.ids, id)
	return nil
}

func (p *recordingEvaluator) evaluated() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ids...)
}

// configRollout: fleet edge has an active configuration rollout r-1.
type configRollout struct{}

func (configRollout) ActiveRolloutID(_ context.Context, fleet string, k policy.Kind) (string, error) {
	if fleet == "edge" && k == policy.KindConfig {
		return "r-1", nil
	}
	return "", nil
}

// agentsTable is a store with tables of its own and the description of
// its agents table (the stream's ARN and view).
func agentsTable(t *testing.T, ctx context.Context) (*store.Store, *types.TableDescription) {
	t.Helper()
	st, names := storetest.NewWithTables(t)
	desc, err := storetest.Client(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(names.Agents)})
	if err != nil {
		t.Fatal(err)
	}
	return st, desc.Table
}

// TestPoller_DeliversAgentChanges writes agent reports through the store and
// expects the stream of DynamoDB Local to deliver them to the handler, which
// evaluates the fleet's active rollout: at once, and again after the stream
// lay idle for a while (DynamoDB Local then trims the position an idle
// shard's iterator points at, and the poller must start the shard again
// rather than lose every later change).
func TestPoller_DeliversAgentChanges(t *testing.T) {
	for _, idle := range []time.Duration{0, 1500 * time.Millisecond} {
		t.Run("idle "+idle.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, desc := agentsTable(t, ctx)
			evaluator := &recordingEvaluator{}
			h := agentevent.Handler{Rollouts: configRollout{}, Evaluator: evaluator}
			p := streams.Poller{Streams: dynamodbstreams.NewFromConfig(storetest.Config(t)), StreamArn: aws.ToString(desc.LatestStreamArn),
				Name: "agent stream", Interval: 20 * time.Millisecond, Handler: h.Records(store.DecodeAgentImage)}
			ready := make(chan struct{})
			p.Ready = ready
			go func() { _ = p.Run(ctx) }()
			select {
			case <-ready:
			case <-time.After(20 * time.Second):
				t.Fatal("the poller never reached the stream (is AWS_ENDPOINT_URL_DYNAMODB_STREAMS set?)")
			}
			time.Sleep(idle)
			a := agent.Agent{ID: "a1", Fleet: "edge", Online: true, LastSeen: t0, Health: agent.Health{Healthy: true, ReportedAt: t0}}
			// One report at a time: a batch evaluates each rollout once, so two
			// reports read in one batch would be one evaluation.
			for i, healthy := range []bool{true, false} {
				a.Health.Healthy = healthy
				if err := st.RecordAgent(ctx, a); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(20 * time.Second)
				for len(evaluator.evaluated()) < i+1 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
			}
			got := evaluator.evaluated()
			if len(got) != 2 || got[0] != "r-1" || got[1] != "r-1" {
				t.Fatalf("evaluated %v, want the fleet's active rollout r-1 once per report", got)
			}
		})
	}
}

// TestPoller_NewImagesTellWhatChanged: the agents table's stream carries new
// images only, and the stamp each write puts on its item tells the
// agent-event path what the old image did: a desired hash's write does not
// matter, a report does, and an agent that moved names the fleet it left.
func TestPoller_NewImagesTellWhatChanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, desc := agentsTable(t, ctx)
	if v := desc.StreamSpecification.StreamViewType; v != types.StreamViewTypeNewImage {
		t.Fatalf("agents stream view %s, want NEW_IMAGE", v)
	}
	var mu sync.Mutex
	var got []agentevent.Change
	p := streams.Poller{Streams: dynamodbstreams.NewFromConfig(storetest.Config(t)), StreamArn: aws.ToString(desc.LatestStreamArn),
		Name: "agent stream", Interval: 20 * time.Millisecond, Handler: func(_ context.Context, recs []streams.Record) error {
			for _, r := range recs {
				if r.Old != nil {
					return fmt.Errorf("record %s has an old image", r.SequenceNumber)
				}
			}
			cs, err := agentevent.FromRecords(store.DecodeAgentImage, recs)
			mu.Lock()
			got = append(got, cs...)
			mu.Unlock()
			return err
		}}
	ready := make(chan struct{})
	p.Ready = ready
	go func() { _ = p.Run(ctx) }()
	<-ready
	a := agent.Agent{ID: "a1", Fleet: "edge", Online: true, LastSeen: t0, Health: agent.Health{Healthy: true, ReportedAt: t0}}
	if err := st.RecordAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := st.SetDesiredHash(ctx, []string{"a1"}, "h1"); err != nil {
		t.Fatal(err)
	}
	a.Health.Healthy = false
	if err := st.RecordAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.AssignAgent(ctx, "a1", 1, func(agent.Agent) assignment.Outcome { return assignment.Outcome{Fleet: "core"} }); err != nil {
		t.Fatal(err)
	}
	var cs []agentevent.Change
	for deadline := time.Now().Add(20 * time.Second); len(cs) < 4 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		cs = append([]agentevent.Change(nil), got...)
		mu.Unlock()
	}
	if len(cs) != 4 {
		t.Fatalf("%d changes, want 4", len(cs))
	}
	matters := []bool{true, false, true, true}
	for i, c := range cs {
		if agentevent.Matters(c) != matters[i] || c.ID != "a1" || c.New == nil {
			t.Errorf("change %d %+v: Matters %v, want %v", i, c, agentevent.Matters(c), matters[i])
		}
	}
	if !agentevent.NeedsAssignment(cs[0]) || agentevent.NeedsAssignment(cs[2]) {
		t.Error("a new agent needs its fleet, a health report does not")
	}
	if c := cs[3]; c.PrevFleet != "edge" || c.New.Fleet != "core" {
		t.Errorf("the move: previous fleet %q, fleet %q; want edge, core", c.PrevFleet, c.New.Fleet)
	}
}

// FromRecord: an image without a stamp (an older build's write) counts as
// changing everything; a delete without an image is named by its key, and
// matters; with both images, they are compared.
func TestFromRecord_WithoutStampOrImage(t *testing.T) {
	item := storedItem(t, agent.Agent{ID: "a7", Fleet: "edge", Online: true, LastSeen: t0})
	delete(item, "wr")
	c, err := agentevent.FromRecord(store.DecodeAgentImage, streams.Record{EventName: "MODIFY", New: item})
	if err != nil || !c.Decisive || !c.Attributes || c.ID != "a7" {
		t.Fatalf("unstamped: %+v, %v; want a change of everything", c, err)
	}
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a7"}}
	c, err = agentevent.FromRecord(store.DecodeAgentImage, streams.Record{EventName: "REMOVE", Keys: key})
	if err != nil || c.ID != "a7" || c.New != nil || !agentevent.Matters(c) {
		t.Fatalf("delete: %+v, %v; want agent a7 gone, mattering", c, err)
	}
	c, err = agentevent.FromRecord(store.DecodeAgentImage, streams.Record{EventName: "REMOVE", Keys: key, Old: item})
	if err != nil || c.PrevFleet != "edge" {
		t.Fatalf("delete with its old image: %+v, %v; want the fleet it left", c, err)
	}
	if _, err := agentevent.FromRecord(store.DecodeAgentImage, streams.Record{EventName: "REMOVE"}); err == nil {
		t.Fatal("a record without image or key names no agent: want an error")
	}
}

// storedItem writes agent a through the store and returns its item as
// DynamoDB holds it.
func storedItem(t *testing.T, a agent.Agent) map[string]types.AttributeValue {
	t.Helper()
	st, names := storetest.NewWithTables(t)
	ctx := context.Background()
	if err := st.RecordAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	out, err := storetest.Client(t).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(names.Agents),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: a.ID}}})
	if err != nil || out.Item == nil {
		t.Fatalf("get item: %v", err)
	}
	return out.Item
}

// TestFromLambdaEvent_DecodesTheStoreItem feeds a real agent item, as the
// Lambda event source would carry it, through the conversion and the
// store's strict decoding.
func TestFromLambdaEvent_DecodesTheStoreItem(t *testing.T) {
	item := storedItem(t, agent.Agent{ID: "a7", Fleet: "edge", Online: true, LastSeen: t0, ServiceVersion: "0.161.0",
		Attributes: map[string]string{"site.timezone": "Europe/Berlin"}, Health: agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0}})
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventID: "e1", EventName: "INSERT",
		Change: events.DynamoDBStreamRecord{NewImage: streams.ToLambda(item)}}}}
	changes, err := agentevent.FromLambdaEvent(store.DecodeAgentImage, ev)
	if err != nil {
		t.Fatal(err)
	}
	got := changes[0].New
	if !changes[0].Stamped || !changes[0].Decisive || got == nil || got.ID != "a7" || got.ServiceVersion != "0.161.0" || got.Attributes["site.timezone"] != "Europe/Berlin" || !got.Health.Healthy {
		t.Fatalf("change %+v, want the agent as stored", changes[0])
	}
	bad := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventID: "e2",
		Change: events.DynamoDBStreamRecord{NewImage: map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute("a8")}}}}}
	if _, err := agentevent.FromLambdaEvent(store.DecodeAgentImage, bad); err == nil {
		t.Fatal("an item that does not decode must fail the batch, not become a zero agent")
	}
}

// TestPoller_BatchesOfAtMostMaxBatch: 251 agent reports written while the
// handler is busy are handed over in batches of at most MaxBatch: the whole
// backlog in one or two by default (500, as the cloud's mapping), in three
// or more of at most 100 with that bound.
// The backlog is read in as few reads as the stream serves it, whatever
// the batch size: each read of a stream that is busy waits its turn on the
// store (a wave's 1,000 desired hashes, read 100 at a time, held its first
// reports back by seconds on DynamoDB Local).
func TestPoller_BatchesOfAtMostMaxBatch(t *testing.T) {
	for _, c := range []struct {
		maxBatch, atMost, minBatches, maxBatches int
	}{{maxBatch: 0, atMost: streams.DefaultMaxBatch, minBatches: 1, maxBatches: 2}, {maxBatch: 100, atMost: 100, minBatches: 3, maxBatches: 251}} {
		sizes, reads := backlogBatches(t, c.maxBatch, 251, nil)
		total := 0
		for _, n := range sizes {
			total += n
			if n > c.atMost {
				t.Fatalf("MaxBatch %d: batches of %v, one above %d", c.maxBatch, sizes, c.atMost)
			}
		}
		if total != 251 || len(sizes) < c.minBatches || len(sizes) > c.maxBatches {
			t.Fatalf("MaxBatch %d: batches of %v, want the 251 reports in %d to %d batches", c.maxBatch, sizes, c.minBatches, c.maxBatches)
		}
		if reads > 1 {
			t.Fatalf("MaxBatch %d: %d reads returned records once the backlog was written, want it read at once", c.maxBatch, reads)
		}
	}
}

// TestPoller_ABatchThatFailsHasTheReadDeliveredAgain: when a batch of a read
// fails, the records of that read are delivered again from its first, so
// that none is skipped (a batch handed over before is handled twice, which
// handlers tolerate).
func TestPoller_ABatchThatFailsHasTheReadDeliveredAgain(t *testing.T) {
	failed := false
	sizes, _ := backlogBatches(t, 100, 251, func(call int) error {
		if call == 2 && !failed { // the second batch of the backlog's read
			failed = true
			return errors.New("throttled")
		}
		return nil
	})
	delivered := 0
	for _, n := range sizes {
		delivered += n
	}
	if !failed || delivered < 251+100 {
		t.Fatalf("batches %v (failed: %v): want the 251 reports and the batch before the failure again", sizes, failed)
	}
}

// backlogBatches writes n agents while the poller's first batch waits and
// returns the sizes of the batches it handed over and how many stream reads
// returned records after the backlog was written (the first batch let go).
// fail, if set, can fail the handling of a batch (its call number, from 0)
// after it was counted.
func backlogBatches(t *testing.T, maxBatch, n int, fail func(call int) error) ([]int, int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, desc := agentsTable(t, ctx)
	var mu sync.Mutex
	var sizes []int
	total, calls := 0, 0
	var reads atomic.Int32
	var released atomic.Bool
	hold := make(chan struct{})
	client := dynamodbstreams.NewFromConfig(storetest.Config(t), func(o *dynamodbstreams.Options) {
		o.APIOptions = append(o.APIOptions, countReads(&reads, &released))
	})
	p := streams.Poller{Streams: client, StreamArn: aws.ToString(desc.LatestStreamArn),
		Name: "agent stream", Interval: 20 * time.Millisecond, MaxBatch: maxBatch, Handler: func(_ context.Context, recs []streams.Record) error {
			<-hold // the first batch waits until the backlog is written
			mu.Lock()
			defer mu.Unlock()
			sizes = append(sizes, len(recs))
			calls++
			if fail != nil {
				if err := fail(calls - 1); err != nil {
					return err
				}
			}
			total += len(recs)
			return nil
		}}
	ready := make(chan struct{})
	p.Ready = ready
	go func() { _ = p.Run(ctx) }()
	<-ready
	for i := 0; i < n; i++ {
		a := agent.Agent{ID: fmt.Sprintf("a%03d", i), Fleet: "edge", Online: true, LastSeen: t0}
		if err := st.RecordAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	released.Store(true)
	close(hold)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		done := total >= n
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), sizes...), int(reads.Load())
}

// countReads counts the GetRecords calls that returned records once
// counting is on.
func countReads(n *atomic.Int32, on *atomic.Bool) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("countReads", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if r, ok := out.Result.(*dynamodbstreams.GetRecordsOutput); ok && len(r.Records) > 0 && on.Load() {
				n.Add(1)
			}
			return out, md, err
		}), middleware.After)
	}
}
