package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// The store serves every core interface that reads or writes state.
var (
	_ planner.Store      = (*Store)(nil)
	_ enginetask.Store   = (*Store)(nil)
	_ enginetask.Tokens  = (*Store)(nil)
	_ executor.Offers    = (*Store)(nil)
	_ gateway.Agents     = (*Store)(nil)
	_ gateway.PushAcker  = (*Store)(nil)
	_ gateway.BatchSaver = (*Store)(nil)
	_ gateway.Configs    = (*Store)(nil)
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

var (
	clientOnce sync.Once
	client     *dynamodb.Client
	clientErr  error
)

// dynamo is the client of the DynamoDB Local that `make test` starts
// (scripts/with-dynamodb-local.sh). Without it the integration tests fail:
// they are part of the suite, not optional extras.
func dynamo(t testing.TB) *dynamodb.Client {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
			t.Skip("MYRIARCH_UNIT_ONLY: the DynamoDB integration tests run with make test")
		}
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: the store's integration tests need DynamoDB Local; run `make test`, " +
			"or scripts/with-dynamodb-local.sh go test ./adapters/store/...")
	}
	clientOnce.Do(func() {
		cfg, err := config.LoadDefaultConfig(context.Background())
		clientErr = err
		// DynamoDB Local sends no x-amz-crc32 header on error responses, and
		// the SDK then logs a warning for every lost race (aws-sdk-go-v2 #3545).
		client = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	})
	if clientErr != nil {
		t.Fatalf("AWS config: %v", clientErr)
	}
	return client
}

// newStore creates the tables under a prefix of its own, so that tests run
// in parallel, and deletes them afterwards.
func newStore(t testing.TB) *Store {
	t.Helper()
	c := dynamo(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	prefix := fmt.Sprintf("t%s-%.40s-", hex.EncodeToString(b[:]), name)
	ctx := context.Background()
	if err := CreateTables(ctx, c, prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DeleteTables(context.Background(), c, prefix); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return New(c, TablesWithPrefix(prefix))
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func agentOf(id, fleet string) agent.Agent {
	return agent.Agent{ID: id, Fleet: fleet, Online: true, LastSeen: t0, ConnectedAt: t0.Add(-time.Hour),
		Attributes:     map[string]string{"host.name": id},
		ServiceVersion: "0.150.0",
		Health:         agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0},
		RemoteConfig:   agent.RemoteConfigStatus{Hash: "h0", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
}

// newRollout is a pending configuration rollout of fleet edge toward h1
// with n targets spread over waves (wave = i % waves).
func newRollout(id string, n, waves int, created time.Time) (rollout.Rollout, []rollout.Target) {
	r := rollout.Rollout{ID: id, Fleet: "edge", Kind: policy.KindConfig, Status: rollout.Pending, ToRef: "h1",
		Origin: rollout.OriginGitOps, CreatedAt: created, Policy: policy.BuiltIn(policy.KindConfig)}
	for w := 0; w < waves; w++ {
		r.Waves = append(r.Waves, rollout.Wave{Index: w, Name: fmt.Sprintf("w%d", w), Status: rollout.WavePending})
	}
	ts := make([]rollout.Target, n)
	for i := range ts {
		ts[i] = rollout.Target{RolloutID: id, AgentID: fmt.Sprintf("a%05d", i), Wave: i % waves, Status: rollout.TargetPending,
			Attempt: 1, FromRef: "h0", ToRef: "h1"}
	}
	return r, ts
}

// seed records an agent's first report, which creates it as reported,
// fleet included.
// seed records an agent as if its assignment had run already: its fleet
// and assignment error as given, nothing left pending.
func seed(t testing.TB, s *Store, a agent.Agent) {
	t.Helper()
	must(t, s.RecordAgent(context.Background(), a))
	_, _, _, err := s.AssignAgent(context.Background(), a.ID, 0, func(agent.Agent) assignment.Outcome {
		return assignment.Outcome{Fleet: a.Fleet, Error: a.AssignmentError}
	})
	must(t, err)
}
