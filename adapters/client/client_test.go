package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/adapters/client"
	apidoc "github.com/myriarch/myriarch/api"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// sameJSON fails unless the typed value encodes to the JSON the API sent:
// the client's types mirror the schemas field for field.
func sameJSON(t *testing.T, name string, raw []byte, typed any) {
	t.Helper()
	again, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: the typed value loses or changes fields\nAPI:   %s\ntyped: %s", name, raw, again)
	}
}

// roundTrip decodes raw into a new T and compares its encoding with raw.
func roundTrip[T any](t *testing.T, name string, raw []byte) {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sameJSON(t, name, raw, v)
}

// TestTypes_MirrorTheDocumentExamples decodes every example of
// api/openapi.yaml into its client type and encodes it again.
func TestTypes_MirrorTheDocumentExamples(t *testing.T) {
	var doc struct {
		Components struct {
			Examples map[string]struct {
				Value any `yaml:"value"`
			} `yaml:"examples"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(apidoc.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	checks := map[string]func(*testing.T, string, []byte){
		"MeOperator": roundTrip[client.Me], "RolloutWaitingApproval": roundTrip[client.Rollout],
		"RolloutBuiltInPolicy": roundTrip[client.Rollout], "RolloutSecondApproval": roundTrip[client.Rollout],
		"RolloutRedGate": roundTrip[client.Rollout], "RolloutListPage": roundTrip[client.Page[client.Rollout]],
		"TargetListVersion": roundTrip[client.Page[client.Target]], "TargetListOfAStage": roundTrip[client.Page[client.Target]], "FleetStatusUI": roundTrip[client.Fleet],
		"FleetListPage": roundTrip[client.Page[client.Fleet]], "VersionOptions": roundTrip[client.VersionOptions],
		"SelectPlanned": roundTrip[client.SelectResult], "SelectNoop": roundTrip[client.SelectResult],
		"TargetAfterClear": roundTrip[client.ClearResult], "AuditListFleet": roundTrip[client.Page[client.AuditEntry]],
		"RevisionRequestQuickstart": roundTrip[client.RevisionRequest], "ApplyResult": roundTrip[client.ApplyResult],
		"ValidationInvalid": roundTrip[client.Validation], "CurrentRevision": roundTrip[client.Revision],
		"AgentListPage": roundTrip[client.Page[client.Agent]], "AgentFailingExporter": roundTrip[client.AgentDetail],
		// releases and install plans
		"ReleaseListPage": roundTrip[client.Page[client.Release]], "ReleaseAdmin": roundTrip[client.Release],
		"ReleaseDetailEdge": roundTrip[client.ReleaseDetail], "LatestReleaseFleetsContrib": roundTrip[client.LatestReleaseFleets],
		"ReleaseSummaryContrib": roundTrip[client.ReleaseSummary], "InstallPlanTarget": roundTrip[client.InstallPlan],
		"InstallPlanRollout": roundTrip[client.InstallPlan], "InstallPlanNotReady": roundTrip[client.InstallPlan],
		"EventListPaused": roundTrip[client.EventList], // the feed
		// plans
		"PlanRequestApplied": roundTrip[client.PlanRequest], "PlanRequestVersion": roundTrip[client.PlanRequest],
		"PlanWithApproval": roundTrip[client.Plan], "PlanWithWindows": roundTrip[client.Plan], "PlanNothingRelevant": roundTrip[client.Plan],
	}
	for name, ex := range doc.Components.Examples {
		check, ok := checks[name]
		if !ok {
			if len(name) < 7 || name[:7] != "Problem" {
				t.Errorf("example %s has no client type in this test", name)
				continue
			}
			check = roundTrip[client.Problem]
		}
		raw, err := json.Marshal(ex.Value)
		if err != nil {
			t.Fatal(err)
		}
		check(t, name, raw)
	}
}

// TestTypes_MirrorTheServer compares the typed answers of the real handler
// with its bytes, operation by operation, over a rollout with counts, a
// version rollout with progress, a selection and audit entries.
func TestTypes_MirrorTheServer(t *testing.T) {
	s := clienttest.Start(t, t0)
	id := s.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	s.Evaluate(id)
	ctx := t.Context()
	op := s.Client(clienttest.OperatorToken)
	if _, err := op.SelectVersion(ctx, "edge", client.SelectRequest{Version: "0.162.0", Reason: "CVE"}); err != nil {
		t.Fatal(err)
	}
	versions, err := op.AllRollouts(ctx, client.RolloutFilter{Kind: "version"}, 0)
	if err != nil || len(versions) != 1 {
		t.Fatalf("version rollouts %v, %v", versions, err)
	}
	s.Evaluate(versions[0].ID)
	gets := []struct{ name, path string }{
		{name: "me", path: "/api/v1/me"}, {name: "rollouts", path: "/api/v1/rollouts"}, {name: "rollout", path: "/api/v1/rollouts/" + id},
		{name: "targets", path: "/api/v1/rollouts/" + id + "/targets"}, {name: "version targets", path: "/api/v1/rollouts/" + versions[0].ID + "/targets"},
		{name: "version rollout", path: "/api/v1/rollouts/" + versions[0].ID}, {name: "fleets", path: "/api/v1/fleets"}, {name: "fleet", path: "/api/v1/fleets/edge"},
		{name: "options", path: "/api/v1/fleets/edge/version-options"}, {name: "audit", path: "/api/v1/audit?targetType=fleet&targetId=edge"},
		{name: "revision", path: "/api/v1/revisions/current"}, {name: "agents", path: "/api/v1/agents"}, {name: "agent", path: "/api/v1/agents/e01"},
		{name: "releases", path: "/api/v1/releases?distribution=otelcol-contrib"}, {name: "release", path: "/api/v1/releases/otelcol-contrib/0.162.0"},
		{name: "latest", path: "/api/v1/releases/otelcol-contrib/latest/fleets"}, {name: "summary", path: "/api/v1/releases/summary"},
		{name: "install plan", path: "/api/v1/fleets/edge/install-plan"},
	}
	typed := map[string]func() any{
		"me": func() any { return new(client.Me) }, "rollouts": func() any { return new(client.Page[client.Rollout]) },
		"rollout": func() any { return new(client.Rollout) }, "targets": func() any { return new(client.Page[client.Target]) },
		"version targets": func() any { return new(client.Page[client.Target]) }, "version rollout": func() any { return new(client.Rollout) },
		"fleets": func() any { return new(client.Page[client.Fleet]) }, "fleet": func() any { return new(client.Fleet) },
		"options": func() any { return new(client.VersionOptions) }, "audit": func() any { return new(client.Page[client.AuditEntry]) },
		"revision": func() any { return new(client.Revision) }, "agents": func() any { return new(client.Page[client.Agent]) },
		"agent":    func() any { return new(client.AgentDetail) },
		"releases": func() any { return new(client.Page[client.Release]) }, "release": func() any { return new(client.ReleaseDetail) },
		"latest": func() any { return new(client.LatestReleaseFleets) }, "summary": func() any { return new(client.ReleaseSummary) },
		"install plan": func() any { return new(client.InstallPlan) },
	}
	for _, g := range gets {
		var raw json.RawMessage
		if err := op.Do(ctx, http.MethodGet, g.path, nil, nil, &raw); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		v := typed[g.name]()
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, g.name, raw, v)
	}
	var raw json.RawMessage
	plan := client.PlanRequest{Fleet: "edge", Kind: "config", Revision: &client.RevisionRequest{Commit: "c2", Files: clienttest.Files("receivers: {hostmetrics: {}}\n")}}
	if err := op.Do(ctx, http.MethodPost, "/api/v1/plans", nil, plan, &raw); err != nil {
		t.Fatalf("plan: %v", err)
	}
	p, err := op.CreatePlan(ctx, plan)
	if err != nil || !p.Planned {
		t.Fatalf("plan %+v, %v", p, err)
	}
	sameJSON(t, "plan", raw, p)
}

func TestRolloutsAndActions(t *testing.T) {
	s := clienttest.Start(t, t0)
	id := s.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	ctx := t.Context()
	op := s.Client(clienttest.OperatorToken)
	s.Evaluate(id)
	s.ApplyConfig("e01")
	s.Evaluate(id)
	s.Advance(5 * time.Minute)
	s.Evaluate(id)
	r, err := op.GetRollout(ctx, id)
	if err != nil || r.Status != rollout.WaitingApproval || r.Waves[0].Counts.Succeeded != 1 || *r.Waves[1].Total != 2 {
		t.Fatalf("rollout %+v, %v", r, err)
	}
	if r, err = op.Approve(ctx, id, 1); err != nil || r.Status != rollout.Running {
		t.Fatalf("approve: %s, %v", r.Status, err)
	}
	if r, err = op.Act(ctx, id, client.ActionPause); err != nil || r.Status != rollout.Paused {
		t.Fatalf("pause: %s, %v", r.Status, err)
	}
	ts, err := op.AllTargets(ctx, id, client.TargetFilter{Wave: client.WaveIndex(1)}, 0)
	if err != nil || len(ts) != 2 || ts[0].AgentID != "e02" {
		t.Fatalf("targets of wave 1: %+v, %v", ts, err)
	}
}

func TestAgents(t *testing.T) {
	s := clienttest.Start(t, t0)
	id := s.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	s.Evaluate(id)
	s.PutAgent(clienttest.HealthyAgent("u1", map[string]string{"host.name": "edge-gw-02"}, "", t0))
	s.UpdateAgent("e02", func(a *agent.Agent) { a.Attributes["host.name"] = "edge-gw-02" })
	s.UpdateAgent("e03", func(a *agent.Agent) { a.Online = false })
	ctx := t.Context()
	c := s.Client(clienttest.ViewerToken)
	no, yes := false, true
	cases := []struct {
		f    client.AgentFilter
		want string
	}{
		{f: client.AgentFilter{}, want: "e01 e02 e03 u1"},
		{f: client.AgentFilter{Fleet: "edge"}, want: "e01 e02 e03"},
		{f: client.AgentFilter{Online: &no}, want: "e03"},
		{f: client.AgentFilter{ConfigStatuses: []string{"drifted"}}, want: "e01"}, // the canary was sent the new configuration
		{f: client.AgentFilter{Selector: "labels.wave=canary", Online: &yes}, want: "e01"},
		{f: client.AgentFilter{AssignmentError: &yes}, want: ""},
		{f: client.AgentFilter{Version: "0.162.0"}, want: ""},
		{f: client.AgentFilter{Gone: &no}, want: "e01 e02 e03 u1"},
	}
	for _, tc := range cases {
		as, err := c.AllAgents(ctx, tc.f, 0)
		var ids []string
		for _, a := range as {
			ids = append(ids, a.ID)
		}
		if err != nil || strings.Join(ids, " ") != tc.want {
			t.Errorf("%+v: %v, %v; want %s", tc.f, ids, err, tc.want)
		}
	}
	a, err := c.GetAgent(ctx, "e01")
	if err != nil || a.DisplayName != "e01" || len(a.Targets) != 1 || a.Targets[0].RolloutID != id || !a.Targets[0].Active {
		t.Fatalf("e01: %+v, %v", a, err)
	}
	_, err = c.GetAgent(ctx, "edge-gw-02")
	var p *client.Problem
	if !errors.As(err, &p) || p.Code != "agent_ambiguous" || !strings.Contains(err.Error(), "e02 (fleet edge, online, labels.fleet=edge), u1 (no fleet") ||
		len(p.Candidates) != 2 || p.Candidates[0].ID != "e02" || p.Candidates[1].ID != "u1" {
		t.Errorf("a shared name: %v, want agent_ambiguous naming both, with their candidates", err)
	}
	if _, err := c.GetAgent(ctx, "nobody"); !client.IsCode(err, "agent_not_found") {
		t.Errorf("an unknown agent: %v", err)
	}
}

func TestProblems(t *testing.T) {
	s := clienttest.Start(t, t0)
	ctx := t.Context()
	_, err := s.Client(clienttest.ViewerToken).GetRollout(ctx, "r-nope")
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 404 || p.Code != "rollout_not_found" || !client.IsCode(err, "rollout_not_found") {
		t.Fatalf("error %v, want the problem rollout_not_found", err)
	}
	if err.Error() != "404 rollout_not_found: rollout r-nope does not exist" {
		t.Errorf("Error() = %q", err.Error())
	}
	_, err = s.Client(clienttest.ViewerToken).Act(ctx, "r-nope", client.ActionPause)
	if !errors.As(err, &p) || p.Code != "forbidden" || p.Permission != "rollouts:operate" {
		t.Fatalf("error %v, want forbidden naming rollouts:operate", err)
	}
	_, err = s.Client(clienttest.AdminToken).ApplyRevision(ctx, client.RevisionRequest{Commit: "c1", Files: map[string]string{"fleets/edge.yaml": "kind: Fleet\n"}})
	if !errors.As(err, &p) || p.Status != 422 || p.Code != "revision_invalid" || len(p.Issues) == 0 {
		t.Fatalf("error %v, want revision_invalid with issues", err)
	}
}

// TestProblems_NotFromTheAPI covers answers of proxies and API Gateway.
func TestProblems_NotFromTheAPI(t *testing.T) {
	cases := []struct {
		status      int
		body, want  string
		contentType string
	}{
		{status: 502, body: "<html>bad gateway</html>", want: "502 bad_gateway: <html>bad gateway</html>", contentType: "text/html"},            // a proxy's page: the text
		{status: 429, body: `{"message":"Too Many Requests"}`, want: "429 throttled: Too Many Requests", contentType: "application/json"},       // API Gateway's throttle
		{status: 503, body: "", want: "503 service_unavailable: Service Unavailable", contentType: "text/plain"},                                // no body: the status text
		{status: 403, body: `{"message":"Missing Authentication Token"}`, want: "403 forbidden: Missing Authentication Token", contentType: ""}, // API Gateway without a route
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", c.contentType)
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		}))
		_, err := client.New(srv.URL, "t").Me(t.Context())
		srv.Close()
		var p *client.Problem
		if !errors.As(err, &p) || p.Status != c.status || err.Error() != c.want {
			t.Errorf("%d %q: error %v, want %q", c.status, c.body, err, c.want)
		}
	}
}

func TestAll_FollowsPagesUpToTheLimit(t *testing.T) {
	pages := map[string]client.Page[int]{"": {Items: []int{1, 2}, Next: "a"}, "a": {Items: nil, Next: "b"}, "b": {Items: []int{3, 4, 5}}}
	cases := []struct {
		limit int
		want  []int
		calls int
	}{
		{limit: 0, want: []int{1, 2, 3, 4, 5}, calls: 3}, // every page, an empty one included
		{limit: 2, want: []int{1, 2}, calls: 1},          // the first page is enough
		{limit: 3, want: []int{1, 2, 3}, calls: 3},       // stops inside the last page
		{limit: 9, want: []int{1, 2, 3, 4, 5}, calls: 3}, // fewer items than the limit
	}
	for _, c := range cases {
		var sizes []int
		got, err := client.All(t.Context(), c.limit, func(token string, size int) (client.Page[int], error) {
			sizes = append(sizes, size)
			return pages[token], nil
		})
		if err != nil || !reflect.DeepEqual(got, c.want) || len(sizes) != c.calls {
			t.Errorf("limit %d: %v in %d calls, want %v in %d", c.limit, got, len(sizes), c.want, c.calls)
		}
		if c.limit > 0 && sizes[0] != c.limit || c.limit == 0 && sizes[0] != client.MaxPageSize {
			t.Errorf("limit %d: first page size %d", c.limit, sizes[0])
		}
	}
}

func TestEffectiveHealthWait(t *testing.T) {
	cases := []struct {
		p    client.PolicySnapshot
		want time.Duration
	}{
		{p: client.PolicySnapshot{HealthWait: "5m0s", HealthWaitSeconds: 300}, want: 5 * time.Minute},       // the policy's value
		{p: client.PolicySnapshot{HealthWait: "1.5s", HealthWaitSeconds: 1}, want: 1500 * time.Millisecond}, // the string keeps fractions
		{p: client.PolicySnapshot{HealthWaitSeconds: 30}, want: 30 * time.Second},                           // only the seconds
		{p: client.PolicySnapshot{HealthWait: "0s"}, want: time.Minute},                                     // 0 waits 60 s
		{p: client.PolicySnapshot{}, want: time.Minute},                                                     // none waits 60 s
	}
	for _, c := range cases {
		if got := c.p.EffectiveHealthWait(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.p, got, c.want)
		}
	}
}

// waitingApproval applies the edge revision with policy and drives the
// canary e01 through its health wait: the rollout waits for the approval
// of wave 1.
func waitingApproval(t *testing.T, s *clienttest.Server, policy string) string {
	t.Helper()
	id := s.ApplyEdgeFiles(t, 3, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", policy))
	s.Evaluate(id)
	s.ApplyConfig("e01")
	s.Evaluate(id)
	s.Advance(5 * time.Minute)
	s.Evaluate(id)
	if st := s.Rollout(id).Status; st != rollout.WaitingApproval {
		t.Fatalf("rollout is %s, want waiting_approval", st)
	}
	return id
}

// Approve with a reason, the rules of approvals as problems, reject and
// resume with their options: each method sends its body and reads the
// rollout the action left.
func TestApprovalActions(t *testing.T) {
	s := clienttest.Start(t, t0)
	id := waitingApproval(t, s, clienttest.CanaryPolicy+"  approvals: {required: 2, expiry: 24h}\n")
	ctx := t.Context()
	op, reviewer := s.Client(clienttest.OperatorToken), s.Client(clienttest.ReviewerToken)
	r, err := op.ApproveWith(ctx, id, client.ApproveRequest{Wave: "1", Reason: "canary green"})
	if w := r.Waves[1]; err != nil || r.Status != rollout.WaitingApproval || len(w.Approvals) != 1 || w.Approvals[0].Reason != "canary green" ||
		w.ApprovalsRequired != 2 || !w.ApprovalExpiresAt.Equal(t0.Add(5*time.Minute+24*time.Hour)) {
		t.Fatalf("first approval: %+v, %v", w, err)
	}
	if _, err := op.Approve(ctx, id, 1); !client.IsCode(err, "wave_already_approved") {
		t.Errorf("the same approver twice: %v", err)
	}
	if _, err := s.Client(clienttest.AdminToken).Approve(ctx, id, 1); !client.IsCode(err, "self_approval") {
		t.Errorf("the applier of the revision: %v", err)
	}
	r, err = reviewer.Reject(ctx, id, client.RejectRequest{Wave: "1", Reason: "not during the sale"})
	if err != nil || r.Status != rollout.Paused || r.Waves[1].Rejected == nil || r.Waves[1].Rejected.By != "Sam Reviewer" ||
		r.Waves[1].Rejected.Reason != "not during the sale" {
		t.Fatalf("reject: %s %+v, %v", r.Status, r.Waves[1].Rejected, err)
	}
	if _, err := op.Act(ctx, id, client.ActionReject); !client.IsCode(err, "request_invalid") {
		t.Errorf("reject without a wave: %v", err)
	}
	if r, err = op.Resume(ctx, id, client.ResumeRequest{}); err != nil || r.Waves[1].Status != rollout.WaveWaitingApproval || len(r.Waves[1].Approvals) != 0 {
		t.Fatalf("resume: %+v, %v; want the wave waiting for its approvals anew", r.Waves[1], err)
	}
	r, err = op.Resume(ctx, id, client.ResumeRequest{FreezeOverride: true, Reason: "hotfix"})
	if !client.IsCode(err, "action_not_allowed") {
		t.Errorf("resume with freezeOverride while waiting for approval: %v (approve carries it then)", err)
	}
	r, err = op.ApproveWith(ctx, id, client.ApproveRequest{Wave: "1", FreezeOverride: true, Reason: "hotfix"})
	if err != nil || r.FreezeOverride == nil || r.FreezeOverride.By != "Dana Operator" || r.FreezeOverride.Reason != "hotfix" {
		t.Fatalf("approve with freezeOverride: %+v, %v", r.FreezeOverride, err)
	}
}

// TestTypes_MirrorTheServer_StagesAndGates: a rollout in stages whose
// gate was read, its approvals and its freeze override decode into the
// client's types without losing a field.
func TestTypes_MirrorTheServer_StagesAndGates(t *testing.T) {
	s := clienttest.Start(t, t0)
	gated := strings.Replace(clienttest.CanaryPolicy, "  healthWait: 5m\n", `  healthWait: 5m
  approvalsBetween: [canary]
  health: {metrics: [{name: export-failures, query: q, max: 0.01}], probes: [{url: "http://{host}:13133/", dryRun: true}]}
  freezes: [{name: holidays, regions: [us-east-1], from: "2026-12-20T00:00:00Z", until: "2027-01-04T00:00:00Z"}]
`, 1)
	id := s.ApplyEdgeFiles(t, 3, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", gated))
	s.Evaluate(id)
	s.ApplyConfig("e01")
	s.Evaluate(id)
	s.Advance(5 * time.Minute)
	s.Evaluate(id) // the canary's stage begins its gate
	s.Advance(30 * time.Second)
	s.ReadGates(id, nil) // no reader: a red reading with an error
	ctx := t.Context()
	op := s.Client(clienttest.OperatorToken)
	if _, err := op.Resume(ctx, id, client.ResumeRequest{FreezeOverride: true, Reason: "hotfix"}); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := op.Do(ctx, http.MethodGet, "/api/v1/rollouts/"+id, nil, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var r client.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "rollout with a gate", raw, r)
	g := r.Stages[0].Gate
	if g == nil || g.Readings != 1 || len(g.Recent) != 1 || len(g.Recent[0].Results) == 0 || g.Recent[0].Results[0].Error == "" ||
		r.Policy.Health == nil || len(r.Policy.Freezes) != 1 || r.FreezeOverride == nil {
		t.Fatalf("stage gate %+v, policy %+v, override %+v", g, r.Policy, r.FreezeOverride)
	}
}

// TestBase: the URL the local stack prints (…/api/v1) is the same API as
// the bare base URL; an API Gateway stage keeps its path.
func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":          "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/":         "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/api/v1":   "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/api/v1/":  "http://127.0.0.1:8080",
		"https://x.example/prod/api/v1":  "https://x.example/prod",
		"https://x.example/prod":         "https://x.example/prod",
		"https://x.example/prod/api/v12": "https://x.example/prod/api/v12",
	} {
		if got := client.Base(in); got != want {
			t.Errorf("Base(%s) = %s, want %s", in, got, want)
		}
	}
	s := clienttest.Start(t, t0)
	for _, base := range []string{s.URL + "/api/v1", s.URL + "/api/v1/"} {
		if me, err := client.New(base, clienttest.ViewerToken).Me(t.Context()); err != nil || me.DisplayName != "Vera Viewer" {
			t.Errorf("%s: %+v, %v", base, me, err)
		}
		// A Client built without New resolves the same way.
		c := &client.Client{BaseURL: base, Token: clienttest.ViewerToken}
		if _, err := c.Me(t.Context()); err != nil {
			t.Errorf("Client{BaseURL: %s}: %v", base, err)
		}
	}
}

// TestWaveRef: an index goes as a JSON number, a name as a string; the API
// takes either.
func TestWaveRef(t *testing.T) {
	for ref, want := range map[client.WaveRef]string{"1": `{"wave":1}`, "rest": `{"wave":"rest"}`, client.WaveIndex(0): `{"wave":0}`, "2a": `{"wave":"2a"}`} {
		b, err := json.Marshal(client.RejectRequest{Wave: ref})
		if err != nil || string(b) != want {
			t.Errorf("%q: %s, %v; want %s", ref, b, err, want)
		}
	}
	s := clienttest.Start(t, t0)
	id := s.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	s.Evaluate(id)
	s.ApplyConfig("e01")
	s.Evaluate(id)
	s.Advance(5 * time.Minute)
	s.Evaluate(id)
	op := s.Client(clienttest.OperatorToken)
	ts, err := op.AllTargets(t.Context(), id, client.TargetFilter{Wave: "rest"}, 0)
	if err != nil || len(ts) != 2 || ts[0].Wave != 1 {
		t.Fatalf("targets of wave rest: %+v, %v", ts, err)
	}
	_, err = op.ApproveWith(t.Context(), id, client.ApproveRequest{Wave: "canry"})
	var p *client.Problem
	if !errors.As(err, &p) || p.Code != "wave_name_unknown" || strings.Join(p.Waves, ",") != "canary,rest" {
		t.Fatalf("approve of an unknown name: %v (%+v), want wave_name_unknown listing canary, rest", err, p)
	}
	if r, err := op.ApproveWith(t.Context(), id, client.ApproveRequest{Wave: "rest"}); err != nil || !r.Waves[1].Approved {
		t.Fatalf("approve rest: %v", err)
	}
}

// TestTargets_ByStage: a rollout in stages places its targets (stage, pass,
// batch), the filter Stage lists one stage's targets, and a stage the
// rollout lacks is a request_invalid that lists its stages. The regions
// and zones of a pass that is not split are those of its agents.
func TestTargets_ByStage(t *testing.T) {
	s := clienttest.Start(t, t0)
	for i, where := range [][2]string{{"eu-1", "eu-1a"}, {"us-1", "us-1b"}, {"eu-1", "eu-1b"}} {
		attrs := map[string]string{"labels.fleet": "edge", "cloud.region": where[0], "cloud.availability_zone": where[1]}
		if i == 0 {
			attrs["labels.wave"] = "canary"
		}
		s.PutAgent(clienttest.HealthyAgent(fmt.Sprintf("e%02d", i+1), attrs, "old", s.Now()))
	}
	staged := strings.Replace(clienttest.CanaryPolicy, "    - {name: rest, percent: 100, requireApproval: true}\n",
		"    - {name: rest, percent: 100, requireApproval: true, by: zone}\n", 1)
	id := s.ApplyEdgeFiles(t, 0, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", staged))
	ctx := t.Context()
	c := s.Client(clienttest.ViewerToken)
	ts, err := c.AllTargets(ctx, id, client.TargetFilter{Stage: "rest/eu-1b"}, 0)
	if err != nil || len(ts) != 1 || ts[0].AgentID != "e03" || ts[0].Stage != "rest/eu-1b" || ts[0].Pass != "rest/eu-1/eu-1b" ||
		ts[0].Batch == nil || *ts[0].Batch != 0 {
		t.Fatalf("targets of rest/eu-1b: %+v, %v; want e03 in rest/eu-1/eu-1b#0", ts, err)
	}
	_, err = c.AllTargets(ctx, id, client.TargetFilter{Stage: "eu-1b"}, 0)
	var p *client.Problem
	if !errors.As(err, &p) || p.Code != "request_invalid" || strings.Join(p.Stages, ",") != "canary,rest/eu-1b,rest/us-1b" {
		t.Fatalf("an unknown stage: %v (%+v), want request_invalid listing canary, rest/eu-1b, rest/us-1b", err, p)
	}
	var raw json.RawMessage
	if err := c.Do(ctx, http.MethodGet, "/api/v1/rollouts/"+id, nil, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var r client.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "rollout with passes", raw, r)
	if canary := r.Stages[0].Passes[0]; strings.Join(canary.Regions, ",") != "eu-1" || strings.Join(canary.Zones, ",") != "eu-1a" ||
		strings.Join(canary.Agents, ",") != "e01" {
		t.Errorf("canary pass %+v, want e01 in eu-1 and eu-1a", canary)
	}
}
