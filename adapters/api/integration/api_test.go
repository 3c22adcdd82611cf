// Package integration runs the API over HTTP against the real store on the
// DynamoDB Local that `make test` starts (scripts/with-dynamodb-local.sh):
// the store wired as the API's Store, its conditions, paging tokens and
// indexes, and the Evaluator and planner on them. adapters/api's own tests cover
// every operation and refusal on the in-memory store (local/store/memstore).
package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/adapters/store"
	apidoc "github.com/myriarch/myriarch/api"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/rollout"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var (
	clientOnce sync.Once
	client     *dynamodb.Client
	clientErr  error
)

func dynamo(t *testing.T) *dynamodb.Client {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
			t.Skip("MYRIARCH_UNIT_ONLY: the DynamoDB integration tests run with make test")
		}
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: run `make test`, or scripts/with-dynamodb-local.sh go test ./adapters/api/integration")
	}
	clientOnce.Do(func() {
		cfg, err := config.LoadDefaultConfig(context.Background())
		clientErr = err
		client = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	})
	if clientErr != nil {
		t.Fatal(clientErr)
	}
	return client
}

type fakeSFN struct {
	mu    sync.Mutex
	woken []string
}

func (f *fakeSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.woken = append(f.woken, *in.TaskToken)
	return &sfn.SendTaskSuccessOutput{}, nil
}

func (f *fakeSFN) StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return &sfn.StartExecutionOutput{}, nil
}

type env struct {
	t         *testing.T
	st        *store.Store
	sfn       *fakeSFN
	evaluator enginetask.Evaluator
	srv       *httptest.Server
	router    routers.Router

	mu  sync.Mutex
	now time.Time
	ids int
}

var operator = api.Principal{Actor: "user:22222222-2222-4222-8222-222222222222", DisplayName: "Dana Operator", Role: api.RoleOperator}
var admin = api.Principal{Actor: "token:33333333-3333-4333-8333-333333333333", DisplayName: "CI pipeline", Role: api.RoleAdmin}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := dynamo(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "api" + hex.EncodeToString(b[:]) + "-"
	ctx := context.Background()
	if err := store.CreateTables(ctx, c, prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.DeleteTables(context.Background(), c, prefix) })
	e := &env{t: t, st: store.New(c, store.TablesWithPrefix(prefix)), sfn: &fakeSFN{}, now: t0}
	e.evaluator = enginetask.Evaluator{Store: e.st, Clock: e.clock, Log: slog.New(slog.DiscardHandler),
		Executors: executor.Registry{executor.Manual: executor.ManualExecutor{}, executor.Updater: executor.UpdaterExecutor{Offers: e.st}}}
	tt, err := api.NewTokenTable([]api.TokenEntry{
		{TokenSHA256: api.HashToken("op"), Actor: operator.Actor, DisplayName: operator.DisplayName, Role: operator.Role},
		{TokenSHA256: api.HashToken("ad"), Actor: admin.Actor, DisplayName: admin.DisplayName, Role: admin.Role},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Deps{
		Store: e.st, Actions: e.evaluator, SFN: e.sfn,
		Planning: &plannertask.Runner{Planner: planner.Planner{Store: e.st, Clock: e.clock, NewID: e.newID("r")}, Executors: e.evaluator.Executors},
		Catalog:  api.StaticCatalog{Versions: []string{"0.161.0", "0.162.0"}},
		Auth:     tt, Clock: e.clock, NewID: e.newID("req"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if e.router, err = legacy.NewRouter(doc); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) newID(prefix string) func() string {
	return func() string {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.ids++
		return fmt.Sprintf("%s-%04d", prefix, e.ids)
	}
}

// do sends a request and validates the answer against the document.
func (e *env) do(method, path, token, body string) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	u, _ := url.Parse(path)
	vr, _ := http.NewRequest(method, (&url.URL{Path: u.Path, RawQuery: u.RawQuery}).String(), nil)
	route, params, err := e.router.FindRoute(vr)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route},
		Status:                 resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(raw)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
	if err != nil {
		e.t.Errorf("%s %s: the answer does not match the document: %v", method, path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return resp.StatusCode, out
}

func (e *env) seedAgent(id string, labels map[string]string) {
	e.t.Helper()
	ctx := context.Background()
	a := agent.Agent{ID: id, Attributes: labels, Online: true, LastSeen: t0, ConnectedAt: t0, ServiceVersion: "0.161.0",
		Health: agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0}, RemoteConfig: agent.RemoteConfigStatus{Hash: "old", Status: agent.ConfigApplied}}
	if err := e.st.RecordAgent(ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if err := e.st.SetDesiredHash(ctx, []string{id}, "old"); err != nil {
		e.t.Fatal(err)
	}
}

const revisionJSON = `{"commit": "9f3c2a17", "files": {
 "fleets/edge.yaml": "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: edge}\nspec:\n  selector: {matchAttributes: {labels.fleet: edge}}\n  collector: {distribution: otelcol-contrib, version: 0.161.0}\n  update:\n    executor: manual\n    selection: {enabled: true, versions: [0.161.0, 0.162.0]}\n  rollout: {configPolicy: canary-then-all}\n",
 "policies/canary-then-all.yaml": "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: canary-then-all}\nspec:\n  waves:\n    - name: canary\n      selector: {matchAttributes: {labels.wave: canary}}\n    - {name: rest, percent: 100, requireApproval: true}\n  maxConcurrent: 0\n  healthWait: 5m\n",
 "configs/edge.yaml": "receivers: {otlp: {}}\n"}}`

func TestAPIOnDynamoDB_ApplyApproveSelectAndPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seedAgent("e1", map[string]string{"labels.fleet": "edge", "labels.wave": "canary"})
	for _, id := range []string{"e2", "e3", "e4"} {
		e.seedAgent(id, map[string]string{"labels.fleet": "edge"})
	}

	status, applied := e.do("POST", "/api/v1/revisions", "ad", revisionJSON)
	if status != 200 {
		t.Fatalf("apply: %d %v", status, applied)
	}
	status, list := e.do("GET", "/api/v1/rollouts?kind=config", "op", "")
	items, _ := list["items"].([]any)
	if status != 200 || len(items) != 1 {
		t.Fatalf("rollouts: %d %v", status, list)
	}
	id := items[0].(map[string]any)["id"].(string)

	// Through the canary wave to the approval of wave 1, as the state machine would.
	pass := func() {
		if _, err := e.evaluator.Evaluate(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	reported, ok, err := e.st.GetAgent(ctx, "e1")
	if err != nil || !ok {
		t.Fatalf("agent e1: %v", err)
	}
	reported.RemoteConfig = agent.RemoteConfigStatus{Hash: reported.DesiredHash, Status: agent.ConfigApplied, Since: t0}
	if err := e.st.RecordAgent(ctx, reported); err != nil {
		t.Fatal(err)
	}
	pass()
	e.mu.Lock()
	e.now = e.now.Add(5 * time.Minute)
	e.mu.Unlock()
	pass()
	if stored, err := e.st.ParkToken(ctx, id, "tok-1", rollout.WaitingApproval); err != nil || !stored {
		t.Fatalf("park: %v %v", stored, err)
	}

	status, view := e.do("POST", "/api/v1/rollouts/"+id+"/actions/approve", "op", `{"wave": 1}`)
	if status != 200 || view["status"] != "running" {
		t.Fatalf("approve: %d %v", status, view)
	}
	if r, _ := e.st.GetRollout(ctx, id); r.TaskToken != "" || len(e.sfn.woken) != 1 {
		t.Errorf("token %q left, woken %v; want cleared after one wake", r.TaskToken, e.sfn.woken)
	}
	_, audit := e.do("GET", "/api/v1/audit?targetType=rollout&targetId="+id, "op", "")
	if entries, _ := audit["items"].([]any); len(entries) == 0 || entries[0].(map[string]any)["action"] != "rollout.approve" {
		t.Errorf("audit %v, want rollout.approve newest", audit)
	}

	// The feed from the outbox: what the passes and the approval wrote, a
	// foreign cursor a 400.
	_, feed := e.do("GET", "/api/v1/events?rollout="+id, "op", "")
	var types []string
	for _, it := range feed["items"].([]any) {
		types = append(types, it.(map[string]any)["type"].(string))
	}
	if fmt.Sprint(types) != "[rollout.started rollout.waiting_approval rollout.approved]" || feed["next"] == "" {
		t.Errorf("events %v (%v), want started, waiting_approval, approved and a cursor", types, feed)
	}
	if status, p := e.do("GET", "/api/v1/events?after="+url.QueryEscape(feed["next"].(string)), "op", ""); status != 400 || p["code"] != "request_invalid" {
		t.Errorf("a rollout's cursor for every event: %d %v", status, p)
	}

	// Targets in pages of the store's tokens; a foreign token is a 400.
	_, p1 := e.do("GET", "/api/v1/rollouts/"+id+"/targets?limit=3", "op", "")
	next, _ := p1["nextPageToken"].(string)
	_, p2 := e.do("GET", "/api/v1/rollouts/"+id+"/targets?limit=3&pageToken="+url.QueryEscape(next), "op", "")
	if n1, n2 := len(p1["items"].([]any)), len(p2["items"].([]any)); n1 != 3 || n2 != 1 || next == "" {
		t.Errorf("pages of %d and %d (next %q), want 3 and 1", n1, n2, next)
	}
	if status, p := e.do("GET", "/api/v1/rollouts/"+id+"/targets?pageToken=forged", "op", ""); status != 400 || p["code"] != "request_invalid" {
		t.Errorf("forged token: %d %v", status, p)
	}

	// A version choice: stored with compare-and-set, planned into a UI rollout.
	status, sel := e.do("POST", "/api/v1/fleets/edge/actions/select-version", "op", `{"version": "0.162.0", "reason": "CVE fix"}`)
	if status != 200 || sel["planned"] != true || sel["rolloutId"] == nil {
		t.Fatalf("select: %d %v", status, sel)
	}
	_, fleet := e.do("GET", "/api/v1/fleets/edge", "op", "")
	if vt := fleet["versionTarget"].(map[string]any); vt["source"] != "ui" || vt["version"] != "0.162.0" {
		t.Errorf("versionTarget %v, want 0.162.0 from ui", vt)
	}
	if status, _ := e.do("POST", "/api/v1/fleets/edge/actions/clear-version-selection", "op", ""); status != 200 {
		t.Errorf("clear: %d", status)
	}

	// A revision with an error applies nothing.
	bad := strings.Replace(revisionJSON, "configPolicy: canary-then-all", "configPolicy: missing", 1)
	bad = strings.Replace(bad, "9f3c2a17", "deadbeef", 1)
	if status, p := e.do("POST", "/api/v1/revisions", "ad", bad); status != 422 || p["code"] != "revision_invalid" {
		t.Errorf("bad revision: %d %v", status, p)
	}
	if _, cur := e.do("GET", "/api/v1/revisions/current", "op", ""); cur["commit"] != "9f3c2a17" || cur["appliedBy"] != "CI pipeline" {
		t.Errorf("current revision %v, want 9f3c2a17 applied by CI pipeline", cur)
	}
	if status, all := e.do("GET", "/api/v1/rollouts", "op", ""); status != 200 || len(all["items"].([]any)) < 2 {
		t.Errorf("all rollouts: %d %v, want the configuration and the version rollout", status, all)
	}
}

// TestAPIOnDynamoDB_ImpossibleIDs sends ids and names that DynamoDB cannot
// take as a key (over its key size, or empty) to every operation that
// reads one: each is a 404 (400 for an empty path segment or a revision's
// commit, an empty page for a list filter), never the store's
// ValidationException as a 500.
func TestAPIOnDynamoDB_ImpossibleIDs(t *testing.T) {
	e := newEnv(t)
	if status, applied := e.do("POST", "/api/v1/revisions", "ad", revisionJSON); status != 200 {
		t.Fatalf("apply: %d %v", status, applied)
	}
	long := strings.Repeat("r", 5000)
	longName := strings.Repeat("e", 5000)
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{method: "GET", path: "/api/v1/rollouts/" + long, body: "", status: 404, code: "rollout_not_found"},
		{method: "GET", path: "/api/v1/rollouts/" + long + "/targets", body: "", status: 404, code: "rollout_not_found"},
		{method: "POST", path: "/api/v1/rollouts/" + long + "/actions/pause", body: "", status: 404, code: "rollout_not_found"},
		{method: "POST", path: "/api/v1/rollouts/" + long + "/actions/approve", body: `{"wave": 1}`, status: 404, code: "rollout_not_found"},
		{method: "GET", path: "/api/v1/rollouts//targets", body: "", status: 400, code: "request_invalid"},
		{method: "POST", path: "/api/v1/rollouts//actions/abort", body: "", status: 400, code: "request_invalid"},
		{method: "GET", path: "/api/v1/fleets/" + longName, body: "", status: 404, code: "fleet_not_found"},
		{method: "GET", path: "/api/v1/events?rollout=" + long, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/events?fleet=" + longName, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/fleets/" + longName + "/version-options", body: "", status: 404, code: "fleet_not_found"},
		{method: "POST", path: "/api/v1/fleets/" + longName + "/actions/select-version", body: `{"version": "0.162.0"}`, status: 404, code: "fleet_not_found"},
		{method: "POST", path: "/api/v1/fleets/" + longName + "/actions/clear-version-selection", body: "", status: 404, code: "fleet_not_found"},
		{method: "GET", path: "/api/v1/fleets//version-options", body: "", status: 400, code: "request_invalid"},
		{method: "GET", path: "/api/v1/rollouts?fleet=" + longName, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/audit?targetType=fleet&targetId=" + longName, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/audit?targetType=rollout&targetId=" + long, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/audit?targetType=revision&targetId=" + long, body: "", status: 200, code: ""},
		{method: "GET", path: "/api/v1/audit?targetType=" + long + "&targetId=edge", body: "", status: 200, code: ""},
	}
	for _, c := range cases {
		status, out := e.do(c.method, c.path, "op", c.body)
		where := c.method + " " + c.path[:min(len(c.path), 60)]
		if status != c.status || (c.code != "" && out["code"] != c.code) {
			t.Errorf("%s: %d %v, want %d %s", where, status, out["code"], c.status, c.code)
		}
		if items, ok := out["items"].([]any); c.status == 200 && (!ok || len(items) != 0) {
			t.Errorf("%s: items %v, want an empty page", where, out["items"])
		}
	}
	// A revision's commit is part of the store's keys too.
	if status, out := e.do("POST", "/api/v1/revisions", "ad", `{"commit": "`+long+`", "files": {}}`); status != 400 || out["code"] != "request_invalid" {
		t.Errorf("a 5,000-character commit: %d %v, want 400 request_invalid", status, out["code"])
	}
}
