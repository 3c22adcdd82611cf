//go:build localcloud

// The local cloud's end-to-end runs (make cloud-test, part of make test):
// scripts/cloud.sh synthesizes stage "cloud" and runs these with
// MYRIARCH_CLOUD_DIR (settings, gateway binary) and
// MYRIARCH_CLOUD_ASSEMBLY. Each run uses the template alone, with every
// AWS call held to its role's policy; TestCloud_LeastPrivilege then
// checks the calls the runs recorded against the grants.

package cloud

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/webhook"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/examples/webhook-receiver/receiver"
	"github.com/myriarch/myriarch/local/localcloud/iam"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/stack"
)

// calls gathers what every run's roles called, for the least-privilege test.
var calls struct {
	sync.Mutex
	list     []iam.Call
	policies *iam.Policies
	runs     int
}

func settings(t *testing.T) (Settings, string, string) {
	t.Helper()
	dir, assembly := os.Getenv("MYRIARCH_CLOUD_DIR"), os.Getenv("MYRIARCH_CLOUD_ASSEMBLY")
	if dir == "" || assembly == "" {
		t.Fatal("MYRIARCH_CLOUD_DIR and MYRIARCH_CLOUD_ASSEMBLY are unset: run make cloud-test (scripts/cloud.sh test)")
	}
	var s Settings
	b, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, assembly
}

// startCloud starts a fresh cloud from the assembly, and at the end of
// the test checks that no call was denied and no stream batch failed.
func startCloud(t *testing.T, ctx context.Context, secrets map[string]string) (*Cloud, stack.Endpoints, Settings) {
	t.Helper()
	s, dir, assembly := settings(t)
	logs := filepath.Join(dir, "logs", t.Name())
	stopGates, err := StartGates(s, filepath.Join(dir, "gates", t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopGates)
	c, err := Start(ctx, Options{
		Assembly: assembly, Stack: "Myriarch-" + s.Stage, DynamoDB: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"),
		RIE: os.Getenv("MYRIARCH_LAMBDA_RIE"), Gateway: filepath.Join(dir, "opamp-gateway"), LogDir: logs,
		Parameters: map[string]string{"GatewayCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/local"},
		Secrets:    secrets, Fresh: true, Clock: time.Now,
		// The watchdog runs every 5 minutes in the template; a run lasts less.
		ScheduleEvery: map[string]time.Duration{watchdogRule(t, assembly, s): 20 * time.Second},
		Log:           slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		calls.Lock()
		calls.list = append(calls.list, c.Record.Calls()...)
		calls.policies = c.Policies
		calls.runs++
		calls.Unlock()
		if d := c.Denials(); len(d) > 0 {
			t.Errorf("calls denied by their role's policy (%s): %v", logs, d)
		}
		if n := c.FailedBatches(); n > 0 {
			t.Errorf("%d stream batches went to the dead-letter queue (%s)", n, logs)
		}
		_ = c.Close()
	})
	e := stack.Endpoints{APIURL: c.APIURL, GatewayURL: c.GatewayURL, AdminToken: s.AdminToken, OperatorToken: s.OperatorToken,
		ViewerToken: s.ViewerToken, AgentToken: c.AgentToken, Clock: time.Now}
	return c, e, s
}

// watchdogRule is the logical id of the watchdog's schedule.
func watchdogRule(t *testing.T, assembly string, s Settings) string {
	b, err := os.ReadFile(filepath.Join(assembly, "Myriarch-"+s.Stage+".template.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct{ Type string }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for id, r := range doc.Resources {
		if r.Type == "AWS::Events::Rule" && strings.HasPrefix(id, "WatchdogSchedule") {
			return id
		}
	}
	t.Fatal("the template has no watchdog schedule")
	return ""
}

// The demo's four rollouts on the template: the quickstart configuration
// (canary, approval by the operator), a version through the updater
// executor, the topology rollout by region and zone with the Prometheus
// gate between stages, and the red gate that rolls a stage back.
func TestCloud_Demo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, e, s := startCloud(t, ctx, nil)
	if got := c.GatewayEnv("MYRIARCH_GATEWAY_DOWNLOAD_URL"); got != s.PackageURL {
		t.Errorf("the gateway's package URL is %q, want the packageDownloadUrl setting %q", got, s.PackageURL)
	}
	sum, err := e.Demo(ctx, stack.DemoOptions{Revision: "../../../examples/quickstart", Agents: 8, Speed: 10, HealthWait: "2s", Bake: "1s",
		NewVersion: "0.162.0", MetricsAddr: s.Metrics, Timeout: 7 * time.Minute, Out: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.RolloutsCompleted != 3 || sum.RolloutsRolledBack != 1 {
		t.Errorf("summary %+v: want 3 rollouts completed and 1 rolled back", sum)
	}
	readTour(t, ctx, e)
}

// Version rollouts through a webhook executor, with the signing secret
// from Secrets Manager (myriarch/cloud/edge-hook): a first rollout whose
// installs never finish is superseded by a second (the planner ends the
// first and the receiver gets its cancels), which completes; a third is
// aborted by an operator; then the selection is cleared.
func TestCloud_WebhookVersionRollout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, e, _ := startCloud(t, ctx, map[string]string{"myriarch/cloud/edge-hook": "cloud-signing-secret"})
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = 4, e.GatewayURL, e.AgentToken, 10
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop()
	held := map[string]bool{"0.162.0": true, "0.164.0": true} // installs that never finish: the rollout stays in flight
	var mu sync.Mutex
	cancels := 0
	rc := &receiver.Receiver{Secret: "cloud-signing-secret", Now: time.Now,
		Install: func(host, version string) error {
			if held[version] {
				return nil
			}
			return fleet.Install(host, version)
		},
		Cancel: func(webhook.Delivery) error { mu.Lock(); cancels++; mu.Unlock(); return nil }}
	hook := httptest.NewServer(rc)
	defer hook.Close()

	files, err := revision.ReadDir("../../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if strings.HasPrefix(k, "policies/") {
			files[k] = []byte(strings.NewReplacer("healthWait: 30s", "healthWait: 2s").Replace(string(v)))
		}
	}
	files["fleets/edge.yaml"] = []byte(strings.NewReplacer("executor: updater", "executor: webhook\n    executorRef: edge-hook",
		"<=0.163.0", "<=0.164.0").Replace(string(files["fleets/edge.yaml"])))
	files["executors/edge-hook.yaml"] = []byte(`apiVersion: myriarch.dev/v1alpha1
kind: Executor
metadata: {name: edge-hook}
spec:
  type: webhook
  webhook:
    url: ` + hook.URL + `/myriarch
    secretRef: edge-hook
    timeout: 5s
    retryFor: 30s
    cancel: true
`)
	if err := fleet.Wait(ctx, func(a []simfleet.AgentState) bool { return len(a) == cfg.N }); err != nil {
		t.Fatal(err)
	}
	// The bootstrapped configuration is larger than one stored item: the
	// gateway reads it in chunks.
	files["configs/edge.yaml"] = append(files["configs/edge.yaml"], []byte("\n# "+strings.Repeat("padding ", 40<<10)+"\n")...)
	if err := e.Apply(ctx, files, "webhook-1"); err != nil {
		t.Fatal(err)
	}
	hash := revision.Hash(files["configs/edge.yaml"])
	if err := fleet.Wait(ctx, func(as []simfleet.AgentState) bool {
		for _, a := range as {
			if a.ConfigHash != hash {
				return false
			}
		}
		return len(as) == cfg.N
	}); err != nil {
		t.Fatalf("the collectors never ran the large configuration: %v", err)
	}
	first, err := e.SelectVersion(ctx, "edge", "0.162.0")
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "the first rollout's installs in flight", func() bool { return len(rc.Deliveries()) > 0 })
	second, err := e.SelectVersion(ctx, "edge", "0.163.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.WaitRollout(ctx, first, "superseded"); err != nil {
		t.Fatal(err)
	}
	counts, err := e.WaitRollout(ctx, second, "completed")
	if err != nil {
		t.Fatal(err)
	}
	if counts["succeeded"] != cfg.N {
		t.Errorf("targets %v, want %d succeeded", counts, cfg.N)
	}
	mu.Lock()
	if cancels == 0 {
		t.Error("the superseded rollout's installs in flight got no cancel")
	}
	mu.Unlock()

	third, err := e.SelectVersion(ctx, "edge", "0.164.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Post(ctx, e.OperatorToken, "/api/v1/rollouts/"+third+"/actions/abort", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.WaitRollout(ctx, third, "aborted"); err != nil {
		t.Fatal(err)
	}
	if err := e.Post(ctx, e.AdminToken, "/api/v1/fleets/edge/actions/clear-version-selection", map[string]string{"reason": "local cloud test"}); err != nil {
		t.Fatal(err)
	}
}

func waitUntil(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// readTour reads what an operator reads after the runs, through the API
// Gateway front: each list and view, so that the read grants are used as
// operators use them.
func readTour(t *testing.T, ctx context.Context, e stack.Endpoints) {
	t.Helper()
	get := func(path string, out any) {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.APIURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.ViewerToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
			return
		}
		if out != nil {
			_ = json.Unmarshal(b, out)
		}
	}
	var rollouts struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	get("/api/v1/rollouts", &rollouts)
	get("/api/v1/rollouts?fleet=edge", nil)
	if len(rollouts.Items) == 0 {
		t.Fatal("no rollouts listed")
	}
	id := rollouts.Items[0].ID
	get("/api/v1/rollouts/"+id+"/targets", nil)
	get("/api/v1/events?rollout="+id, nil)
	get("/api/v1/events", nil)
	get("/api/v1/events?fleet=edge&since=2020-01-01T00:00:00Z", nil)
	get("/api/v1/audit?targetType=fleet&targetId=edge", nil)
	var agents struct {
		Items []struct {
			ID   string `json:"id"`
			Name string `json:"hostName"`
		} `json:"items"`
	}
	get("/api/v1/agents", &agents)
	get("/api/v1/agents?fleet=edge&online=true", nil)
	if len(agents.Items) > 0 {
		get("/api/v1/agents/"+agents.Items[0].ID, nil)
		get("/api/v1/agents/"+agents.Items[0].Name, nil)
	}
	get("/api/v1/fleets", nil)
	get("/api/v1/fleets/edge", nil)
	get("/api/v1/fleets/edge/version-options", nil)
	get("/ui/", nil)
}

// The grants are exactly what the runs used: every call allowed (the runs
// check that), and no granted action that no run called, but for the
// grants listed in notExercised, each with the reason no run here calls
// it. Runs last: it reads what the runs before it recorded.
func TestCloud_LeastPrivilege(t *testing.T) {
	calls.Lock()
	defer calls.Unlock()
	if calls.runs < 2 || calls.policies == nil {
		t.Fatalf("%d runs recorded: run the whole file (make cloud-test)", calls.runs)
	}
	for _, g := range iam.Unused(calls.policies, calls.list) {
		if reason, ok := notExercised(g); ok {
			t.Logf("granted, not exercised here: %s %s on %s (%s)", g.Role, g.Action, g.Resource, reason)
			continue
		}
		t.Errorf("%s is granted %s on %s, which no run used: remove the grant, or run what uses it", g.Role, g.Action, g.Resource)
	}
}

// notExercised says why a grant that no run here uses is kept: the
// services that use a role on their own (logs, traces, image pulls, the
// streams' pollers and their dead-letter queues), what the local cloud
// does not run (CloudWatch gates, the release refresh), and the paths
// of the code that these runs do not reach, each with where it is tested.
func notExercised(g iam.Grant) (string, bool) {
	role, action, res := g.Role, g.Action, g.Resource
	switch {
	case strings.HasPrefix(action, "logs:") || strings.HasPrefix(action, "xray:"):
		return "the services write the roles' logs and traces; CloudWatch Logs and X-Ray are not emulated", true
	case strings.HasPrefix(action, "ecr:"):
		return "ECS pulls the image; the local cloud runs the gateway binary built from the same source", true
	case strings.HasPrefix(action, "sqs:") && strings.Contains(res, "Failed"):
		return "Lambda sends a stream batch it gave up to this dead-letter queue; every run fails on one", true
	case action == "dynamodb:ListStreams":
		return "Lambda's stream poller lists the streams; the local poller is given the mapping's stream", true
	case action == "secretsmanager:DescribeSecret" && strings.HasPrefix(role, "GatewayTaskExecutionRole"):
		return "ECS's agent describes the secret it injects; the local cloud reads it with GetSecretValue", true
	case action == "lambda:InvokeFunction" && strings.HasSuffix(res, ":*"):
		return "versions and aliases of the function, which CDK's grantInvoke adds; the stack invokes $LATEST", true
	case strings.HasPrefix(action, "cloudwatch:"):
		return "CloudWatch gates: there is no local CloudWatch (core/gate's tests hold the readers to its wire protocol)", true
	case strings.HasPrefix(role, "Rolereleases"):
		return "the daily release refresh, off unless releaseRefresh names distributions; it reads GitHub's API", true
	}
	for _, p := range pathsNotRun {
		if strings.HasPrefix(role, p.role) && action == p.action && strings.HasSuffix(res, p.resource) {
			return p.why, true
		}
	}
	return "", false
}

// pathsNotRun are the grants of code paths that these runs do not reach,
// each with where that path is tested against DynamoDB Local.
var pathsNotRun = []struct{ role, action, resource, why string }{
	{role: "Role", action: "dynamodb:UpdateItem", resource: "table/myriarch-cloud-rollouts", why: "the counter of an evaluation of more than 98 targets, a transaction of its own (adapters/store's pass tests)"},
	{role: "Roleagentevent", action: "dynamodb:BatchGetItem", resource: "table/myriarch-cloud-targets", why: "the targets of the reporting agents when their wave is larger than max(1,000, 8 × agents) (adapters/store)"},
	{role: "Roleagentevent", action: "dynamodb:PutItem", resource: "table/myriarch-cloud-audit", why: "an approval that expired, seen by an agent report's pass (core/engine, local/stack)"},
	{role: "Roleengine", action: "dynamodb:PutItem", resource: "table/myriarch-cloud-audit", why: "an approval that expired (core/engine, local/stack)"},
	{role: "Roleengine", action: "states:StartExecution", resource: "stateMachine:myriarch-cloud-rollout", why: "continue-as-new after the execution's history grows long (adapters/enginetask's state machine tests)"},
	{role: "Roleengine", action: "states:SendTaskSuccess", resource: "stateMachine:myriarch-cloud-rollout", why: "a park that finds its rollout moved on meanwhile wakes itself (adapters/enginetask)"},
	{role: "Rolewatchdog", action: "states:StartExecution", resource: "stateMachine:myriarch-cloud-rollout", why: "a rollout whose execution is gone (adapters/watchdog; local/stack's restart with DATA=)"},
	{role: "Roleplanner", action: "dynamodb:GetItem", resource: "table/myriarch-cloud-agents", why: "the assignment backstop, for an agent whose assignment failed (core/assignment)"},
	{role: "Roleplanner", action: "dynamodb:Scan", resource: "table/myriarch-cloud-agents", why: "an assignment sweep that the API left unfinished (core/assignment)"},
	{role: "Roleplanner", action: "dynamodb:Query", resource: "table/myriarch-cloud-agents/index/assignment", why: "the assignment backstop (core/assignment)"},
	{role: "Roleplanner", action: "dynamodb:DeleteItem", resource: "table/myriarch-cloud-objects", why: "a version selection the planner clears (core/planner)"},
	{role: "Roleagentevent", action: "secretsmanager:GetSecretValue", resource: "secret:myriarch/cloud/*", why: "a webhook start decided in an agent report's pass (local/stack's webhook tests)"},
	{role: "Roleapi", action: "secretsmanager:GetSecretValue", resource: "secret:myriarch/cloud/*", why: "a webhook start decided in an operator's action (local/stack's webhook tests)"},
	{role: "Roleplanner", action: "states:SendTaskSuccess", resource: "stateMachine:myriarch-cloud-rollout", why: "a superseded rollout whose execution is parked on a task token, not on a timer as here (adapters/api's TestPlanning_StartsTheCreatedRolloutAndWakesTheSupersededOne)"},
	{role: "GatewayTaskTaskRole", action: "dynamodb:BatchGetItem", resource: "table/myriarch-cloud-agents", why: "lagging agents whose version the index does not tell, read in one batch; whether a run reaches it depends on when the agents enroll (adapters/gateway's lagging tests, adapters/store)"},
	{role: "Roleapi", action: "dynamodb:ConditionCheckItem", resource: "table/myriarch-cloud-rollouts", why: "the claim of version starts in an operator's action (adapters/store, local/stack)"},
	{role: "Roleengine", action: "dynamodb:Query", resource: "table/myriarch-cloud-agents/index/byCollector", why: "a version pass over collectors served by a myriarch-updater; the simulated agents take their own packages (adapters/store, adapters/enginetask)"},
	{role: "Roleagentevent", action: "dynamodb:Query", resource: "table/myriarch-cloud-agents/index/byCollector", why: "the same, in an agent report's pass (adapters/store, adapters/enginetask)"},
	{role: "Roleapi", action: "dynamodb:Query", resource: "table/myriarch-cloud-agents/index/byCollector", why: "the same, in an operator's action (adapters/store, adapters/enginetask)"},
}
