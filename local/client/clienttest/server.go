// Package clienttest serves the real REST API (adapters/api's handler, the
// engine's Evaluator and the planner) over an in-memory store on an httptest
// server, for the tests of API clients: adapters/client, myrctl, the demo
// driver. The clock is a plain time.Time that tests move; nothing sleeps.
// Rollouts advance only when a test calls Pass, as the state machine would.
package clienttest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/store/memstore"
)

// The bearer tokens of the server, one per role.
const (
	ViewerToken   = "viewer-secret"
	OperatorToken = "operator-secret"
	AdminToken    = "admin-secret"
	// ReviewerToken is a second operator's, for waves that need two
	// approvers besides the creator (Admin applies the revisions).
	ReviewerToken = "reviewer-secret"
)

// The principals behind the tokens.
var (
	Viewer   = api.Principal{Actor: "user:11111111-1111-4111-8111-111111111111", DisplayName: "Vera Viewer", Role: api.RoleViewer}
	Operator = api.Principal{Actor: "user:22222222-2222-4222-8222-222222222222", DisplayName: "Dana Operator", Role: api.RoleOperator}
	Admin    = api.Principal{Actor: "token:33333333-3333-4333-8333-333333333333", DisplayName: "CI pipeline", Role: api.RoleAdmin}
	Reviewer = api.Principal{Actor: "user:44444444-4444-4444-8444-444444444444", DisplayName: "Sam Reviewer", Role: api.RoleOperator}
)

// Releases is the release catalog of the server.
var Releases = api.StaticCatalog{Versions: []string{"0.160.0", "0.161.0", "0.162.0", "0.163.0-rc.1", "0.170.0"},
	Platforms: []string{"linux/amd64", "linux/arm64"}}

// Server is the API on a local URL.
type Server struct {
	URL   string
	Store *memstore.Store

	t         testing.TB
	evaluator enginetask.Evaluator
	mu        sync.Mutex
	now       time.Time
	ids       int
}

// Option changes the API's dependencies before the server starts.
type Option func(*api.Deps)

// WithLiveness judges agents by the rule l (online, gone) instead of
// trusting their stored connection state.
func WithLiveness(l agent.Liveness) Option { return func(d *api.Deps) { d.Liveness = l } }

// Start serves the API at now until the test ends.
func Start(t testing.TB, now time.Time, opts ...Option) *Server {
	t.Helper()
	s := &Server{Store: memstore.New(), t: t, now: now}
	registry := executor.Registry{executor.Manual: executor.ManualExecutor{}, executor.Updater: executor.UpdaterExecutor{Offers: s.Store}}
	s.evaluator = enginetask.Evaluator{Store: s.Store, Clock: s.Now, Executors: registry, Log: slog.New(slog.DiscardHandler)}
	steps := noSteps{}
	d := api.Deps{
		Store: s.Store, Actions: s.evaluator, SFN: steps,
		Planning: &plannertask.Runner{Planner: planner.Planner{Store: s.Store, Clock: s.Now, NewID: s.newID("r")},
			Executors: registry, SFN: steps, StateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:rollout", Tokens: s.Store},
		Catalog: Releases, Auth: tokenTable(t), Clock: s.Now, NewID: s.newID("req"),
	}
	for _, o := range opts {
		o(&d)
	}
	handler, err := api.New(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func tokenTable(t testing.TB) *api.TokenTable {
	var es []api.TokenEntry
	for p, token := range map[api.Principal]string{Viewer: ViewerToken, Operator: OperatorToken, Admin: AdminToken, Reviewer: ReviewerToken} {
		es = append(es, api.TokenEntry{TokenSHA256: api.HashToken(token), Actor: p.Actor, DisplayName: p.DisplayName, Role: p.Role})
	}
	tt, err := api.NewTokenTable(es)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// Client is a client of the server with the token.
func (s *Server) Client(token string) *client.Client { return client.New(s.URL, token) }

// Now is the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Advance moves the server's clock.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

func (s *Server) newID(prefix string) func() string {
	return func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ids++
		return fmt.Sprintf("%s-%04d", prefix, s.ids)
	}
}

// Evaluate evaluates a rollout once, as the state machine's engine step does.
func (s *Server) Evaluate(id string) {
	s.t.Helper()
	if _, err := s.evaluator.Evaluate(context.Background(), id); err != nil {
		s.t.Fatalf("evaluate rollout %s: %v", id, err)
	}
}

// ReadGates takes the gate readings that are due with the reader r (nil:
// an engine without a gate reader, whose readings are red with an error),
// as the state machine's "Reading gates" step does.
func (s *Server) ReadGates(id string, r enginetask.GateReader) {
	s.t.Helper()
	p := s.evaluator
	p.Gates = r
	if _, err := p.ReadGates(context.Background(), id); err != nil {
		s.t.Fatalf("read the gates of rollout %s: %v", id, err)
	}
}

// Rollout reads a rollout as stored.
func (s *Server) Rollout(id string) rollout.Rollout {
	s.t.Helper()
	r, err := s.Store.GetRollout(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// noSteps is a Step Functions that accepts every call: executions are
// driven by Pass.
type noSteps struct{}

func (noSteps) SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return &sfn.SendTaskSuccessOutput{}, nil
}

func (noSteps) StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return &sfn.StartExecutionOutput{}, nil
}

// HealthyAgent is an online, healthy agent at now on version 0.161.0 whose
// desired and applied configuration is hash ("" for a new agent).
func HealthyAgent(id string, attrs map[string]string, hash string, now time.Time) agent.Agent {
	return agent.Agent{ID: id, Attributes: attrs, Online: true, LastSeen: now, ConnectedAt: now,
		Health: agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: now}, ServiceVersion: "0.161.0",
		RemoteConfig: agent.RemoteConfigStatus{Hash: hash, Status: agent.ConfigApplied}, DesiredHash: hash}
}

// PutAgent adds or replaces an agent, as the gateway's first report does.
func (s *Server) PutAgent(a agent.Agent) {
	s.Store.Lock()
	defer s.Store.Unlock()
	s.Store.Agents[a.ID] = a
}

// UpdateAgent changes what an agent reports.
func (s *Server) UpdateAgent(id string, change func(*agent.Agent)) {
	s.t.Helper()
	s.Store.Lock()
	defer s.Store.Unlock()
	a, ok := s.Store.Agents[id]
	if !ok {
		s.t.Fatalf("no agent %s", id)
	}
	change(&a)
	s.Store.Agents[id] = a
}

// ApplyConfig makes agents report their desired configuration as applied.
func (s *Server) ApplyConfig(ids ...string) {
	s.t.Helper()
	for _, id := range ids {
		s.UpdateAgent(id, func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: agent.ConfigApplied, Since: s.Now()}
		})
	}
}

// ReportVersion makes agents report a collector version.
func (s *Server) ReportVersion(version string, ids ...string) {
	s.t.Helper()
	for _, id := range ids {
		s.UpdateAgent(id, func(a *agent.Agent) { a.ServiceVersion = version })
	}
}
