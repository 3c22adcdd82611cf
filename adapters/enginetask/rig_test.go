package enginetask_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/sfnlocal"
	"github.com/myriarch/myriarch/local/storetest"
)

// t0 is a Monday, noon UTC.
var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

const engineFunction = "myriarch-engine"

// rig runs the rollout state machine of statemachines/ on the local Step
// Functions endpoint, with the engine tasks on DynamoDB Local, on a fake
// clock. Agents are simulated by writing their reports through the store.
type rig struct {
	t     testing.TB
	ctx   context.Context
	clk   *sfnlocal.FakeClock
	srv   *sfnlocal.Server
	sfn   *sfn.Client
	st    *store.Store
	h     enginetask.Handler
	smArn string

	invocations atomic.Int64
	evaluations atomic.Int64 // evaluate tasks: engine evaluations the state machine asked for
	failEval    atomic.Int32 // evaluate tasks to fail before they run
	loseEval    atomic.Int32 // evaluate tasks whose evaluation is stored but whose answer is lost: Step Functions retries them
	mu          sync.Mutex
	behaviour   map[string]string // agent id -> "fail" (reports FAILED for h1) or "silent"
	applies     map[string]int    // agent id -> configurations applied
	ids         []string          // every simulated agent
	rollouts    []string          // every rollout started

	// versionExecutor and executorObject are the executor of the version
	// rollouts start creates (default: the updater, no object).
	versionExecutor string
	executorObject  *executorobject.Object
	// react runs first in every simulate: a system outside Myriarch that
	// acts on the agents (an AWX running its jobs).
	react func()
}

func newRig(t testing.TB) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	r := &rig{t: t, ctx: ctx, clk: sfnlocal.NewFakeClock(t0), st: storetest.New(t),
		behaviour: map[string]string{}, applies: map[string]int{}}
	r.srv = sfnlocal.New(sfnlocal.Options{Clock: r.clk})
	t.Cleanup(r.srv.Close)
	hs := httptest.NewServer(r.srv)
	t.Cleanup(hs.Close)
	r.sfn = sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	r.h = enginetask.Handler{
		Evaluator: enginetask.Evaluator{Store: r.st, Clock: r.clk.Now,
			Executors: executor.Registry{executor.Manual: executor.ManualExecutor{}, executor.Updater: executor.UpdaterExecutor{Offers: r.st}}},
		Tokens: r.st, SFN: r.sfn,
	}
	r.srv.RegisterLambda(engineFunction, r.lambda)
	def, err := os.ReadFile("../../statemachines/rollout.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	arn := fmt.Sprintf("arn:aws:lambda:us-east-1:123456789012:function:%s", engineFunction)
	out, err := r.sfn.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("myriarch-rollout"),
		Definition: aws.String(strings.ReplaceAll(string(def), "${EngineFunctionArn}", arn)), RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn")})
	if err != nil {
		t.Fatalf("the state machine must be accepted: %v", err)
	}
	r.smArn = *out.StateMachineArn
	r.h.StateMachineArn = r.smArn
	return r
}

// lambda is the engine function as Lambda would run it: JSON in, JSON out,
// the error's type name becoming the error type Retry and Catch match.
func (r *rig) lambda(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	r.invocations.Add(1)
	var in enginetask.Input
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, err
	}
	if in.Task == enginetask.TaskEvaluate {
		r.evaluations.Add(1)
	}
	if in.Task == enginetask.TaskEvaluate && r.failEval.Load() > 0 {
		r.failEval.Add(-1)
		return nil, &enginetask.RetryableError{Err: fmt.Errorf("injected transient failure")}
	}
	out, err := r.h.Handle(ctx, in)
	if err != nil {
		return nil, err
	}
	if in.Task == enginetask.TaskEvaluate && r.loseEval.Load() > 0 {
		r.loseEval.Add(-1)
		return nil, &enginetask.RetryableError{Err: fmt.Errorf("injected: the evaluation was stored, its answer lost")}
	}
	return json.Marshal(out)
}

// agents records n online, healthy agents of fleet edge on configuration h0
// and version 0.160.0; ids a00, a01, ...
func (r *rig) agents(n int, attrs func(i int) map[string]string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%02d", i)
		if n > 100 {
			ids[i] = fmt.Sprintf("a%04d", i)
		}
		a := agent.Agent{ID: ids[i], Fleet: "edge", Online: true, LastSeen: t0, ConnectedAt: t0.Add(-time.Hour),
			DesiredHash: "h0", ServiceVersion: "0.160.0", VersionSince: t0.Add(-time.Hour),
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Hour)},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "h0", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
		if attrs != nil {
			a.Attributes = attrs(i)
		}
		if err := r.st.RecordAgent(r.ctx, a); err != nil {
			r.t.Fatal(err)
		}
	}
	r.mu.Lock()
	r.ids = append(r.ids, ids...)
	r.mu.Unlock()
	return ids
}

// start creates a rollout of kind k toward toRef with the policy and starts
// its execution as the planner does (execution.Starter.Start).
func (r *rig) start(id string, k policy.Kind, spec policy.Spec, ids []string, attrs func(i int) map[string]string) {
	snap := policy.Policy{Name: "test", Path: "policies/test.yaml", Commit: "c1", Spec: spec}.Snapshot(k)
	from, to := "h0", "h1"
	if k == policy.KindVersion {
		from, to = "0.160.0", "0.161.0"
	}
	var cands []engine.Candidate
	for i, a := range ids {
		c := engine.Candidate{AgentID: a, FromRef: from}
		if attrs != nil {
			c.Attributes = mapAttrs(attrs(i))
		}
		cands = append(cands, c)
	}
	ro, ts, err := engine.Create(engine.NewRollout{ID: id, Fleet: "edge", Kind: k, Policy: snap, ToRef: to, Origin: rollout.OriginGitOps, Candidates: cands, Now: r.clk.Now()})
	if err != nil {
		r.t.Fatal(err)
	}
	if k == policy.KindVersion {
		ro.Executor = cmp.Or(r.versionExecutor, executor.Updater)
		ro.ExecutorObject = r.executorObject
	}
	if err := r.st.CreateRollout(r.ctx, ro, ts); err != nil {
		r.t.Fatal(err)
	}
	r.rollouts = append(r.rollouts, id)
	if err := (execution.Starter{SFN: r.sfn, StateMachineArn: r.smArn}).Start(r.ctx, id); err != nil {
		r.t.Fatal(err)
	}
}

type mapAttrs map[string]string

func (m mapAttrs) Attr(k string) (string, bool) { v, ok := m[k]; return v, ok }

// simulate lets every agent react to what the engine decided: an agent
// whose desired hash (or package offer) differs from what it runs applies it
// and reports success (or FAILED), healthy.
func (r *rig) simulate() {
	r.t.Helper()
	if r.react != nil {
		r.react()
	}
	recs, err := r.st.AgentsByID(r.ctx, r.allIDs())
	if err != nil {
		r.t.Fatal(err)
	}
	now := r.clk.Now()
	for id, a := range recs {
		r.mu.Lock()
		b := r.behaviour[id]
		r.mu.Unlock()
		changed := false
		if a.DesiredHash != "" && a.DesiredHash != a.RemoteConfig.Hash && b != "silent" {
			status := agent.ConfigApplied
			if b == "fail" && a.DesiredHash == "h1" { // the new configuration breaks it; the old one works
				status = agent.ConfigFailed
			}
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: status, Since: now}
			a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: now}
			r.mu.Lock()
			r.applies[id]++
			r.mu.Unlock()
			changed = true
		}
		if a.PackageOffer != "" && a.PackageOffer != a.ServiceVersion && b != "silent" {
			a.ServiceVersion, a.VersionSince = a.PackageOffer, now
			a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: now}
			if b == "starting" { // the new process reports StatusStarting until the test says otherwise
				a.Health = agent.Health{Healthy: false, Status: agent.StatusStarting, ReportedAt: now}
			}
			changed = true
		}
		if changed {
			if err := r.st.RecordAgent(r.ctx, a); err != nil {
				r.t.Fatal(err)
			}
		}
	}
}

func (r *rig) allIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids
}

// run advances the fake clock from timer to timer, letting the agents react
// after every step, until done reports true or nothing is scheduled any more.
// Without done it stops when every rollout ended or parked on a task token
// (an approval's park has a timeout timer, which run must not reach).
func (r *rig) run(done func() bool) {
	r.t.Helper()
	if done == nil {
		done = r.settled
	}
	for step := 0; step < 5000; step++ {
		if err := r.srv.WaitIdle(r.ctx); err != nil {
			r.t.Fatal(err)
		}
		r.simulate()
		if done != nil && done() {
			return
		}
		if !r.clk.AdvanceToNext() {
			if err := r.srv.WaitIdle(r.ctx); err != nil {
				r.t.Fatal(err)
			}
			return
		}
	}
	r.t.Fatal("the rollout did not settle within 5000 steps")
}

// settled: every rollout started is final or parked on a token.
func (r *rig) settled() bool {
	for _, id := range r.rollouts {
		ro, err := r.st.GetRollout(r.ctx, id)
		if err != nil {
			r.t.Fatal(err)
		}
		if !ro.Status.Final() && ro.TaskToken == "" {
			return false
		}
	}
	return true
}

func (r *rig) rollout(id string) (rollout.Rollout, []rollout.Target) {
	r.t.Helper()
	ro, ts, err := r.st.LoadRollout(r.ctx, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return ro, ts
}

func (r *rig) wantStatus(id string, want rollout.Status) rollout.Rollout {
	r.t.Helper()
	ro, _ := r.rollout(id)
	if ro.Status != want {
		r.t.Fatalf("rollout %s is %s (%s), want %s", id, ro.Status, ro.StatusReason, want)
	}
	return ro
}

func (r *rig) execution(id string) *sfn.DescribeExecutionOutput {
	r.t.Helper()
	arn := strings.Replace(r.smArn, ":stateMachine:", ":execution:", 1) + ":" + id
	out, err := r.sfn.DescribeExecution(r.ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

func (r *rig) wantExecution(id string, want types.ExecutionStatus) {
	r.t.Helper()
	if got := r.execution(id).Status; got != want {
		r.t.Fatalf("execution %s is %s, want %s", id, got, want)
	}
}

// history returns the state names the execution entered, in order.
func (r *rig) history(id string) (states []string, events int) {
	r.t.Helper()
	all := r.events(id)
	for _, e := range all {
		if e.StateEnteredEventDetails != nil {
			states = append(states, *e.StateEnteredEventDetails.Name)
		}
	}
	return states, len(all)
}

// events is the execution's whole history with its data (the input of
// every state entered, the output of every state exited), as the console
// reads it.
func (r *rig) events(id string) []types.HistoryEvent {
	r.t.Helper()
	arn := strings.Replace(r.smArn, ":stateMachine:", ":execution:", 1) + ":" + id
	var all []types.HistoryEvent
	var token *string
	for {
		out, err := r.sfn.GetExecutionHistory(r.ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), NextToken: token,
			MaxResults: 1000, IncludeExecutionData: aws.Bool(true)})
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, out.Events...)
		if out.NextToken == nil {
			return all
		}
		token = out.NextToken
	}
}

// stagesShown are the values of "stage" in the input of every state
// named state that the execution entered, in order.
func (r *rig) stagesShown(id, state string) []string {
	r.t.Helper()
	var stages []string
	for _, e := range r.events(id) {
		d := e.StateEnteredEventDetails
		if d == nil || *d.Name != state || d.Input == nil {
			continue
		}
		var in struct {
			Stage string `json:"stage"`
		}
		if err := json.Unmarshal([]byte(*d.Input), &in); err != nil {
			r.t.Fatalf("input of %q: %v", state, err)
		}
		stages = append(stages, in.Stage)
	}
	return stages
}

// operate carries out an operator action on the path the API takes: the
// evaluation applies it and stores (Evaluator.Act), then the execution parked on the
// rollout is woken (execution.Waker.WakeRollout).
func (r *rig) operate(id string, req engine.Request) {
	r.t.Helper()
	if _, err := r.h.Act(r.ctx, id, req); err != nil {
		r.t.Fatalf("%s: %v", req.Action, err)
	}
	w := execution.Waker{SFN: r.h.SFN, Tokens: r.st, Log: slog.New(failOnError{r.t, slog.NewTextHandler(os.Stderr, nil)})}
	if _, err := w.WakeRollout(r.ctx, id, fmt.Sprintf("%s by %s", req.Action, req.Actor)); err != nil {
		r.t.Fatalf("wake after %s: %v", req.Action, err)
	}
}

// failOnError fails the test for a record at level error: a wake that
// failed or a token that could not be cleared.
type failOnError struct {
	t testing.TB
	slog.Handler
}

func (h failOnError) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelError {
		h.t.Errorf("logged: %s", rec.Message)
	}
	return h.Handler.Handle(ctx, rec)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
