// Command storeload measures what the DynamoDB store asks of DynamoDB for
// the two hot paths, against DynamoDB Local:
//
//   - one evaluation over a wave of 1,000 targets: load the rollout and
//     its targets, read the agents, engine.Evaluate, carry out the orders
//     (desired hashes) and save the evaluation; once with every target changing
//     and once with 10 changing;
//   - 1,000 agent status reports of which 10 change something.
//
// It prints requests, items read and written, and the capacity units that
// DynamoDB reports (ReturnConsumedCapacity TOTAL, indexes included). Run it
// with `make storeload`, which starts DynamoDB Local around it; it refuses
// to run without AWS_ENDPOINT_URL_DYNAMODB, so that it never creates tables
// in an AWS account.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

const targets = 1000

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// raw and names let the estimate read items as stored.
var (
	raw   *dynamodb.Client
	names store.Tables
)

func main() {
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		log.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: run `make storeload` (DynamoDB Local)")
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	check(err)
	// DynamoDB Local omits x-amz-crc32 on error responses (aws-sdk-go-v2 #3545).
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "load-" + hex.EncodeToString(b[:]) + "-"
	check(store.CreateTables(ctx, client, prefix))
	defer func() { check(store.DeleteTables(ctx, client, prefix)) }()
	raw, names = client, store.TablesWithPrefix(prefix)
	s := store.New(client, names)

	fmt.Printf("%-44s %s\n", "step", "usage")
	seedAgents(ctx, s)
	seedRollout(ctx, s)
	evaluation(ctx, s, "(a) evaluation, 1,000 of 1,000 targets change", t0)
	for i := 3; i < 40; i += 4 { // 10 started targets whose agents now run the new hash
		a := reportOf(i, t0.Add(10*time.Second))
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigApplied, Since: t0.Add(5 * time.Second)}
		check(s.RecordAgent(ctx, a))
	}
	evaluation(ctx, s, "(a) evaluation, 10 of 1,000 targets change", t0.Add(10*time.Second))
	statusReports(ctx, s)
}

// reportOf is agent i as it reports itself at time at.
func reportOf(i int, at time.Time) agent.Agent {
	a := agent.Agent{ID: fmt.Sprintf("agent-%05d", i), Fleet: "edge", Online: true, LastSeen: at, ConnectedAt: t0.Add(-time.Hour),
		Attributes:   map[string]string{"host.name": fmt.Sprintf("host-%05d", i), "site.timezone": "UTC"},
		Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Minute)},
		RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
	switch i % 4 {
	case 0, 1, 2: // already on the new hash
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigApplied, Since: t0.Add(-3 * time.Minute)}
	}
	return a
}

func seedAgents(ctx context.Context, s *store.Store) {
	start := time.Now()
	s.ResetUsage()
	for i := 0; i < targets; i++ {
		check(s.RecordAgent(ctx, reportOf(i, t0)))
	}
	row("first report of 1,000 agents (setup)", s.Usage(), time.Since(start))
}

// seedRollout is a running rollout with one wave of 1,000 targets: half
// verifying past their health wait (they succeed), a quarter in progress
// whose agent reports the new hash (they verify), a quarter pending (they
// start: maxConcurrent is unlimited).
func seedRollout(ctx context.Context, s *store.Store) {
	snap := policy.BuiltIn(policy.KindConfig)
	snap.MaxConcurrent = 0
	started, verified := t0.Add(-5*time.Minute), t0.Add(-3*time.Minute)
	r := rollout.Rollout{ID: "r-load", Fleet: "edge", Kind: policy.KindConfig, Status: rollout.Running, Policy: snap,
		ToRef: "h-new", Origin: rollout.OriginGitOps, CreatedAt: t0.Add(-10 * time.Minute), StartedAt: &started,
		Waves: []rollout.Wave{{Index: 0, Name: "all", Percent: 100, Status: rollout.WaveRunning, StartedAt: &started}}}
	ts := make([]rollout.Target, targets)
	for i := range ts {
		t := rollout.Target{RolloutID: r.ID, AgentID: fmt.Sprintf("agent-%05d", i), Status: rollout.TargetPending, Attempt: 1, FromRef: "h-old", ToRef: "h-new"}
		switch i % 4 {
		case 0, 1:
			t.Status, t.StartedAt, t.VerifiedAt, t.ReportedAt = rollout.TargetVerifying, &started, &verified, &verified
		case 2:
			t.Status, t.StartedAt = rollout.TargetInProgress, &started
		}
		ts[i] = t
	}
	start := time.Now()
	s.ResetUsage()
	check(s.CreateRollout(ctx, r, ts))
	row("create the rollout with 1,000 targets (setup)", s.Usage(), time.Since(start))
}

// evaluation is what the engine task does for one evaluation, phase by phase.
func evaluation(ctx context.Context, s *store.Store, name string, now time.Time) {
	begin := time.Now()
	s.ResetUsage()
	r, ts, err := s.LoadRollout(ctx, "r-load")
	check(err)
	row("  load rollout + targets", s.Usage(), time.Since(begin))

	phase, u0 := time.Now(), s.Usage()
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.AgentID
	}
	agents, err := s.AgentsByID(ctx, ids)
	check(err)
	row("  read the agents", minus(s.Usage(), u0), time.Since(phase))

	phase = time.Now()
	res := engine.Evaluate(engine.Input{Rollout: r, Targets: ts, Agents: agents, Now: now})
	evaluated := time.Since(phase)

	phase, u0 = time.Now(), s.Usage()
	var starts []string
	for _, o := range res.Orders {
		if o.Kind == engine.OrderStart {
			starts = append(starts, o.AgentID)
		}
	}
	if len(starts) > 0 {
		check(s.SetDesiredHash(ctx, starts, r.ToRef))
	}
	row(fmt.Sprintf("  orders: desired hash of %d agents", len(starts)), minus(s.Usage(), u0), time.Since(phase))

	phase, u0 = time.Now(), s.Usage()
	check(s.SaveEvaluation(ctx, res.Rollout, res.Changed))
	row(fmt.Sprintf("  save %d changed targets + rollout", len(res.Changed)), minus(s.Usage(), u0), time.Since(phase))
	t, ro := itemSizes(ctx, "r-load")
	fmt.Printf("  save as AWS charges it (target item %d B, rollout item %d B): %.0f WCU; DynamoDB Local misreports transactions\n",
		t, ro, saveEstimate(len(res.Changed), t, ro))
	fmt.Printf("  engine.Evaluate: %v\n", evaluated.Round(time.Microsecond))
	row(name, s.Usage(), time.Since(begin))
}

// statusReports records 1,000 heartbeats 10 s after the last write; 10 of
// them also report a changed health.
func statusReports(ctx context.Context, s *store.Store) {
	start := time.Now()
	s.ResetUsage()
	for i := 0; i < targets; i++ {
		a := reportOf(i, t0.Add(20*time.Second))
		if i%4 == 3 && i < 40 {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigApplied, Since: t0.Add(5 * time.Second)}
		}
		if i%100 == 0 {
			a.Health = agent.Health{Healthy: false, Status: "StatusRecoverableError", LastError: "exporter queue full", ReportedAt: t0.Add(20 * time.Second)}
		}
		check(s.RecordAgent(ctx, a))
	}
	row("(b) 1,000 reports, 10 changed", s.Usage(), time.Since(start))
}

// saveEstimate is the write capacity of a SaveEvaluation of n targets as DynamoDB
// charges it: a transactional write costs 2 WCU per started KB of the item,
// and the copy into an index with projection ALL 1 WCU per started KB.
// Targets are in one such index (byAgentKind); the rollout's indexes hold
// only attributes that never change, so an evaluation does not write them. An evaluation
// of n targets writes the rollout once per transaction of 99 targets.
func saveEstimate(n, target, rollout int) float64 {
	links := float64(max(1, (n+98)/99))
	return float64(n)*3*kb(target) + links*2*kb(rollout)
}

// itemSizes reads the largest target item and the rollout item raw and
// sizes them as DynamoDB does: attribute names plus values (numbers about
// one byte per two digits).
func itemSizes(ctx context.Context, rolloutID string) (target, rollout int) {
	out, err := raw.Query(ctx, &dynamodb.QueryInput{TableName: &names.Targets,
		KeyConditionExpression:    aws.String("rolloutId = :r"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberS{Value: rolloutID}}})
	check(err)
	for _, it := range out.Items {
		target = max(target, size(it))
	}
	r, err := raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: &names.Rollouts,
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: rolloutID}}})
	check(err)
	return target, size(r.Item)
}

func size(it map[string]types.AttributeValue) int {
	n := 0
	for k, v := range it {
		n += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += (len(v.Value)+1)/2 + 1
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		default:
			n++
		}
	}
	return n
}

func kb(bytes int) float64 { return float64((bytes + 1023) / 1024) }

func minus(a, b store.Usage) store.Usage {
	return store.Usage{Requests: a.Requests - b.Requests, ItemsRead: a.ItemsRead - b.ItemsRead, ItemsWritten: a.ItemsWritten - b.ItemsWritten,
		ReadUnits: a.ReadUnits - b.ReadUnits, WriteUnits: a.WriteUnits - b.WriteUnits}
}

func row(name string, u store.Usage, d time.Duration) {
	fmt.Printf("%-44s %s in %v\n", name, u, d.Round(time.Millisecond))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
