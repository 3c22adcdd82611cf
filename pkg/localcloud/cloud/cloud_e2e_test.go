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

	"github.com/myriarch/myriarch/examples/webhook-receiver/receiver"
	"github.com/myriarch/myriarch/pkg/localcloud/iam"
	"github.com/myriarch/myriarch/pkg/revision"
	"github.com/myriarch/myriarch/pkg/simfleet"
	"github.com/myriarch/myriarch/pkg/stack"
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
		NewVersion: "0.161.0", MetricsAddr: s.Metrics, Timeout: 7 * time.Minute, Out: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.RolloutsCompleted != 3 || sum.RolloutsRolledBack != 1 {
		t.Errorf("summary %+v: want 3 rollouts completed and 1 rolled back", sum)
	}
	readTour(t, ctx, e)
}

// A version rollout through a webhook executor: the signing secret comes
// from Secrets Manager (myriarch/cloud/edge-hook), the receiver installs
// the version on the simulated collectors, and the rollout completes.
func TestCloud_WebhookVersionRollout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, e, s := startCloud(t, ctx, map[string]string{"myriarch/cloud/edge-hook": "cloud-signing-secret"})
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = 4, e.GatewayURL, e.AgentToken, 10
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop()
	rc := &receiver.Receiver{Secret: "cloud-signing-secret", Now: time.Now, Install: fleet.Install}
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
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "executor: updater", "executor: webhook\n    executorRef: edge-hook", 1))
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
`)
	if err := fleet.Wait(ctx, func(a []simfleet.AgentState) bool { return len(a) == cfg.N }); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(ctx, files, "webhook-1"); err != nil {
		t.Fatal(err)
	}
	id, err := e.SelectVersion(ctx, "edge", "0.163.0")
	if err != nil {
		t.Fatal(err)
	}
	counts, err := e.WaitRollout(ctx, id, "completed")
	if err != nil {
		t.Fatal(err)
	}
	if counts["succeeded"] != cfg.N {
		t.Errorf("targets %v, want %d succeeded", counts, cfg.N)
	}
	if len(rc.Deliveries()) < cfg.N {
		t.Errorf("the receiver got %d deliveries, want one start per collector at least", len(rc.Deliveries()))
	}
	_ = s
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
			Name string `json:"name"`
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

// notExercised says why a grant no run here uses is kept.
func notExercised(g iam.Grant) (string, bool) {
	return "", false
}
