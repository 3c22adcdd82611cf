package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	apidoc "github.com/myriarch/myriarch/api"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/revision"
)

// t0 is the harness's start time; tests move the clock with advance.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// The principals of the tests, one per role, and their bearer tokens.
var (
	viewer   = Principal{Actor: "user:11111111-1111-4111-8111-111111111111", DisplayName: "Vera Viewer", Role: RoleViewer}
	operator = Principal{Actor: "user:22222222-2222-4222-8222-222222222222", DisplayName: "Dana Operator", Role: RoleOperator}
	admin    = Principal{Actor: "token:33333333-3333-4333-8333-333333333333", DisplayName: "CI pipeline", Role: RoleAdmin}
	tokens   = map[Role]string{RoleViewer: "viewer-secret", RoleOperator: "operator-secret", RoleAdmin: "admin-secret"}
	// sam is a second operator: a wave that needs two approvers besides the
	// rollout's creator (admin applies the fixture revision) gets them from
	// operator and sam.
	sam      = Principal{Actor: "user:44444444-4444-4444-8444-444444444444", DisplayName: "Sam Reviewer", Role: RoleOperator}
	samToken = "sam-secret"
)

func tokenTable(t testing.TB) *TokenTable {
	t.Helper()
	var es []TokenEntry
	for _, p := range []Principal{viewer, operator, admin} {
		es = append(es, TokenEntry{TokenSHA256: HashToken(tokens[p.Role]), Actor: p.Actor, DisplayName: p.DisplayName, Role: p.Role})
	}
	es = append(es, TokenEntry{TokenSHA256: HashToken(samToken), Actor: sam.Actor, DisplayName: sam.DisplayName, Role: sam.Role})
	tt, err := NewTokenTable(es)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// fakeSFN records the tokens it was asked to wake.
type fakeSFN struct {
	mu      sync.Mutex
	woken   []string
	started []string // execution names
	err     error
}

func (f *fakeSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.woken = append(f.woken, *in.TaskToken)
	return &sfn.SendTaskSuccessOutput{}, f.err
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, *in.Name)
	return &sfn.StartExecutionOutput{}, nil
}

func (f *fakeSFN) startedNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

func (f *fakeSFN) wokenTokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.woken...)
}

// harness is the real handler on an httptest server over the in-memory
// store, with the real Evaluator and planner. Every answer is validated
// against api/openapi.yaml.
type harness struct {
	t         *testing.T
	store     *memStore
	sfn       *fakeSFN
	srv       *httptest.Server
	evaluator enginetask.Evaluator
	router    routers.Router

	mu  sync.Mutex
	now time.Time
	ids int
}

func newHarness(t *testing.T, opts ...func(*Deps)) *harness {
	t.Helper()
	h := &harness{t: t, store: newMemStore(), sfn: &fakeSFN{}, now: t0}
	h.evaluator = enginetask.Evaluator{Store: h.store, Clock: h.clock, Log: slog.New(slog.DiscardHandler),
		Executors: executor.Registry{executor.Manual: executor.ManualExecutor{}, executor.Updater: executor.UpdaterExecutor{Offers: h.store}}}
	d := Deps{
		Store: h.store, Actions: h.evaluator, SFN: h.sfn,
		Planning: &plannertask.Runner{Planner: planner.Planner{Store: h.store, Clock: h.clock, NewID: h.newID("r")}, Executors: h.evaluator.Executors,
			SFN: h.sfn, StateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:rollout", Tokens: h.store},
		Catalog: StaticCatalog{Versions: []string{"0.160.0", "0.161.0", "0.162.0", "0.163.0-rc.1", "0.170.0"}, Platforms: []string{"linux/amd64", "linux/arm64"}},
		Auth:    tokenTable(t), Clock: h.clock, NewID: h.newID("req"),
	}
	for _, o := range opts {
		o(&d)
	}
	handler, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(handler)
	t.Cleanup(h.srv.Close)
	if h.router, err = documentRouter(); err != nil {
		t.Fatal(err)
	}
	return h
}

// documentRouter finds operations of api/openapi.yaml; it is loaded once.
var documentRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(d)
}

func (h *harness) newID(prefix string) func() string {
	return func() string {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.ids++
		return fmt.Sprintf("%s-%04d", prefix, h.ids)
	}
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// req describes a request; body "" sends none, contentType defaults to
// application/json when there is a body.
type req struct {
	method, path, token, body, contentType string
	header                                 map[string]string
}

func get(path string, role Role) req {
	return req{method: http.MethodGet, path: path, token: tokens[role]}
}
func post(path string, role Role, body string) req {
	return req{method: http.MethodPost, path: path, token: tokens[role], body: body}
}

func (h *harness) do(r req) reply {
	h.t.Helper()
	hr, err := http.NewRequest(r.method, h.srv.URL+r.path, strings.NewReader(r.body))
	if err != nil {
		h.t.Fatal(err)
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	ct := r.contentType
	if ct == "" && r.body != "" {
		ct = "application/json"
	}
	if ct != "-" && ct != "" {
		hr.Header.Set("Content-Type", ct)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	out := reply{status: resp.StatusCode, header: resp.Header, body: body}
	h.validate(r, out)
	return out
}

// validate checks the answer against the operation of the OpenAPI
// document: its status must be listed (or be a 500 under default) and the
// body must match the schema of that status and content type. Requests
// outside the document (unknown paths, methods) are not operations.
func (h *harness) validate(r req, rep reply) {
	h.t.Helper()
	if r.method == http.MethodHead {
		return // no body to check; the document lists GET, and tests compare HEAD with it
	}
	u, _ := url.Parse(r.path)
	// RawPath keeps an escaped '/' (an agent's name) inside its segment.
	vr, _ := http.NewRequest(r.method, (&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}).String(), nil)
	route, params, err := h.router.FindRoute(vr)
	if err != nil {
		if rep.status != http.StatusNotFound && rep.status != http.StatusMethodNotAllowed {
			h.t.Errorf("%s %s answered %d but is no operation of the document: %v", r.method, r.path, rep.status, err)
		}
		return
	}
	if rep.status != http.StatusInternalServerError && route.Operation.Responses.Value(strconv.Itoa(rep.status)) == nil {
		h.t.Errorf("%s %s answered %d, which operation %s does not document", r.method, r.path, rep.status, route.Operation.OperationID)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route},
		Status:                 rep.status, Header: rep.header, Body: io.NopCloser(bytes.NewReader(rep.body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		h.t.Errorf("%s %s: the answer %d does not match the document: %v\nbody: %s", r.method, r.path, rep.status, err, rep.body)
	}
}

func decode[T any](t *testing.T, rep reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rep.body, &v); err != nil {
		t.Fatalf("decode %s: %v", rep.body, err)
	}
	return v
}

// wantOK fails unless the status is 200.
func wantOK(t *testing.T, rep reply) {
	t.Helper()
	if rep.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rep.status, rep.body)
	}
}

// wantProblem checks a refusal: status, problem+json, the code, and no
// trace of the server's internals.
func wantProblem(t *testing.T, rep reply, status int, code string) Problem {
	t.Helper()
	if rep.status != status {
		t.Fatalf("status %d, want %d: %s", rep.status, status, rep.body)
	}
	if ct := rep.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("content type %q, want application/problem+json", ct)
	}
	p := decode[Problem](t, rep)
	if p.Code != code {
		t.Errorf("code %q, want %q (%s)", p.Code, code, p.Detail)
	}
	if p.Type != "https://myriarch.dev/problems/"+code || p.Title == "" || p.Status != status || p.Instance == "" {
		t.Errorf("incomplete problem: %+v", p)
	}
	for _, leak := range []string{"goroutine", ".go:", "panic", "runtime."} {
		if strings.Contains(string(rep.body), leak) {
			t.Errorf("the problem leaks %q: %s", leak, rep.body)
		}
	}
	return p
}

// --- fixtures

const edgeFleet = `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: edge}
spec:
  selector: {matchAttributes: {labels.fleet: edge}}
  collector: {distribution: otelcol-contrib, version: 0.161.0}
  update:
    executor: manual
    selection: {enabled: true, versionRange: ">=0.161.0, <=0.162.0"}
  rollout: {configPolicy: canary-then-all}
`

const coreFleet = `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: core}
spec:
  selector: {matchAttributes: {labels.fleet: core}}
  collector: {distribution: otelcol-contrib, version: 0.161.0}
`

const canaryPolicy = `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: canary-then-all}
spec:
  waves:
    - name: canary
      selector: {matchAttributes: {labels.wave: canary}}
    - {name: rest, percent: 100, requireApproval: true}
  maxConcurrent: 0
  healthWait: 5m
`

// fixtureFiles is a valid revision: fleets edge and core, one policy, the
// rendered configurations.
func fixtureFiles() map[string]string {
	return map[string]string{
		"fleets/edge.yaml": edgeFleet, "fleets/core.yaml": coreFleet, "policies/canary-then-all.yaml": canaryPolicy,
		"configs/edge.yaml": "receivers: {otlp: {}}\n", "configs/core.yaml": "receivers: {hostmetrics: {}}\n",
	}
}

func revisionBody(t testing.TB, commit string, files map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"commit": commit, "files": files})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seedAgents adds the edge agents e1..e4 (e1 is the canary) on the old
// configuration, core agent c1 without a desired hash (bootstrap), and u1
// that no fleet selects.
func (h *harness) seedAgents() {
	add := func(id string, attrs map[string]string, desired string) {
		h.store.Agents[id] = agent.Agent{ID: id, Attributes: attrs, Online: true, LastSeen: t0, ConnectedAt: t0,
			Health: agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0}, ServiceVersion: "0.161.0",
			RemoteConfig: agent.RemoteConfigStatus{Hash: desired, Status: agent.ConfigApplied}, DesiredHash: desired}
	}
	add("e1", map[string]string{"labels.fleet": "edge", "labels.wave": "canary"}, "old")
	for _, id := range []string{"e2", "e3", "e4"} {
		add(id, map[string]string{"labels.fleet": "edge"}, "old")
	}
	add("c1", map[string]string{"labels.fleet": "core"}, "")
	add("u1", map[string]string{"labels.fleet": "elsewhere"}, "old")
}

// applyFixture seeds the agents and applies the fixture revision as admin;
// the planner creates the edge configuration rollout, which it returns.
func (h *harness) applyFixture() string {
	h.t.Helper()
	return h.applyFiles(fixtureFiles())
}

// applyFiles seeds the agents and applies a revision as admin; it returns
// the edge configuration rollout the planner created.
func (h *harness) applyFiles(files map[string]string) string {
	h.t.Helper()
	h.seedAgents()
	rep := h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(h.t, "9f3c2a17", files)))
	wantOK(h.t, rep)
	res := decode[applyResult](h.t, rep)
	for _, fp := range res.Fleets {
		for _, p := range fp.Plans {
			if fp.Fleet == "edge" && p.Kind == "config" && p.Created {
				return p.RolloutID
			}
		}
	}
	h.t.Fatalf("the fixture created no edge configuration rollout: %s", rep.body)
	return ""
}

// pass evaluates a rollout as the state machine would.
func (h *harness) pass(id string) {
	h.t.Helper()
	if _, err := h.evaluator.Evaluate(context.Background(), id); err != nil {
		h.t.Fatal(err)
	}
}

// applyConfig makes an agent report its desired configuration as applied.
func (h *harness) applyConfig(id string) {
	h.store.Lock()
	defer h.store.Unlock()
	a := h.store.Agents[id]
	a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: agent.ConfigApplied, Since: h.now}
	h.store.Agents[id] = a
}

// waitingApproval drives the fixture's rollout through its canary wave to
// the approval of wave 1: start e1, e1 applies, the health wait passes.
func (h *harness) waitingApproval() string {
	h.t.Helper()
	id := h.applyFixture()
	h.throughCanary(id)
	return id
}

// throughCanary starts the canary e1 of rollout id, makes it apply and
// lets its 5 minutes of health wait pass; the rollout must then wait for
// the approval of wave 1.
func (h *harness) throughCanary(id string) {
	h.t.Helper()
	h.pass(id)
	h.applyConfig("e1")
	h.pass(id)
	h.advance(5 * time.Minute)
	h.pass(id)
	if r, _ := h.store.GetRollout(context.Background(), id); r.Status != "waiting_approval" {
		h.t.Fatalf("rollout is %s (%s), want waiting_approval", r.Status, r.StatusReason)
	}
}

func mustLoad(t testing.TB, files map[string]string) revision.Revision {
	t.Helper()
	bs := map[string][]byte{}
	for p, s := range files {
		bs[p] = []byte(s)
	}
	rev, issues := revision.Load(bs, "9f3c2a17")
	if issues.HasErrors() {
		t.Fatalf("fixture revision: %v", issues)
	}
	return rev
}
