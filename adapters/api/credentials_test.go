package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
)

const credAgent = "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"

func credHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.store.Agents[credAgent] = agent.Agent{ID: credAgent, Attributes: map[string]string{"host.name": "web-1"}}
	h.store.SetCredential(credAgent)
	return h
}

// reset-credential: operators and admins; the credential is forgotten, the
// reset audited with its actor and reason; by id or display name.
func TestResetCredential_ForgetsAndAudits(t *testing.T) {
	h := credHarness(t)
	wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/reset-credential", RoleViewer, "")), http.StatusForbidden, CodeForbidden)
	if !h.store.HasCredential(credAgent) {
		t.Fatal("a viewer reset the credential")
	}
	rep := h.do(post("/api/v1/agents/web-1/actions/reset-credential", RoleOperator, `{"reason": "host reinstalled"}`))
	if rep.status != http.StatusOK {
		t.Fatalf("reset: %d %s", rep.status, rep.body)
	}
	got := decode[schema.AgentCredentialReset](t, rep)
	if got.ID != credAgent || got.DisplayName != "web-1" || !got.HadCredential || !got.ResetAt.Equal(t0) {
		t.Fatalf("answer %+v", got)
	}
	if h.store.HasCredential(credAgent) {
		t.Fatal("the credential is still bound")
	}
	again := decode[schema.AgentCredentialReset](t, h.do(post("/api/v1/agents/"+credAgent+"/actions/reset-credential", RoleAdmin, "")))
	if again.HadCredential {
		t.Fatal("a second reset found a credential")
	}
	es := h.store.Audit
	if len(es) != 2 {
		t.Fatalf("%d audit entries, want 2: %+v", len(es), es)
	}
	e := es[0]
	if e.Action != ActionCredentialReset || e.TargetType != TargetAgent || e.TargetID != credAgent || e.Actor != operator.Actor ||
		e.Result != audit.ResultSuccess || e.Details["reason"] != "host reinstalled" || e.Details["hadCredential"] != true {
		t.Fatalf("audit entry %+v", e)
	}
}

// An unknown agent is a 404 (nothing to audit); a refused body is a 400,
// audited as a failure, and changes nothing.
func TestResetCredential_Refusals(t *testing.T) {
	h := credHarness(t)
	wantProblem(t, h.do(post("/api/v1/agents/web-9/actions/reset-credential", RoleOperator, "")), http.StatusNotFound, CodeAgentNotFound)
	wantProblem(t, h.do(post("/api/v1/agents/"+strings.Repeat("x", 2000)+"/actions/reset-credential", RoleOperator, "")), http.StatusNotFound, CodeAgentNotFound)
	if len(h.store.Audit) != 0 {
		t.Fatalf("a 404 was audited: %+v", h.store.Audit)
	}
	for _, body := range []string{`{"bogus": 1}`, `[]`, `{"reason": "` + strings.Repeat("r", 501) + `"}`} {
		wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/reset-credential", RoleOperator, body)), http.StatusBadRequest, CodeRequestInvalid)
	}
	if !h.store.HasCredential(credAgent) {
		t.Fatal("a refused request reset the credential")
	}
	if n := len(h.store.Audit); n != 3 || h.store.Audit[0].Result != audit.ResultFailure || h.store.Audit[0].TargetID != "web-1" {
		t.Fatalf("the refusals' audit: %+v", h.store.Audit)
	}
}

// rotate-credential: operators and admins; the request is recorded and
// audited with its actor and reason; the credential stays bound.
func TestRotateCredential_RequestsAndAudits(t *testing.T) {
	h := credHarness(t)
	const path = "/api/v1/agents/web-1/actions/rotate-credential"
	wantProblem(t, h.do(post(path, RoleViewer, "")), http.StatusForbidden, CodeForbidden)
	if h.store.RotationRequested(credAgent) {
		t.Fatal("a viewer asked for a rotation")
	}
	rep := h.do(post(path, RoleOperator, `{"reason": "yearly"}`))
	if rep.status != http.StatusOK {
		t.Fatalf("rotate: %d %s", rep.status, rep.body)
	}
	got := decode[schema.AgentCredentialRotation](t, rep)
	if got.ID != credAgent || got.DisplayName != "web-1" || !got.RequestedAt.Equal(t0) {
		t.Fatalf("answer %+v", got)
	}
	if !h.store.RotationRequested(credAgent) || !h.store.HasCredential(credAgent) {
		t.Fatal("the rotation was not requested, or the credential was dropped")
	}
	if rep := h.do(post("/api/v1/agents/"+credAgent+"/actions/rotate-credential", RoleAdmin, "")); rep.status != http.StatusOK {
		t.Fatalf("an admin's request: %d %s", rep.status, rep.body)
	}
	es := h.store.Audit
	if len(es) != 2 {
		t.Fatalf("%d audit entries, want 2: %+v", len(es), es)
	}
	e := es[0]
	if e.Action != ActionCredentialRotate || e.TargetType != TargetAgent || e.TargetID != credAgent || e.Actor != operator.Actor ||
		e.Result != audit.ResultSuccess || e.Details["reason"] != "yearly" {
		t.Fatalf("audit entry %+v", e)
	}
}

// An unknown agent is a 404 (not audited); an agent without a credential a
// 409 agent_no_credential and a refused body a 400, both audited as
// failures, and nothing is requested.
func TestRotateCredential_Refusals(t *testing.T) {
	h := credHarness(t)
	wantProblem(t, h.do(post("/api/v1/agents/web-9/actions/rotate-credential", RoleOperator, "")), http.StatusNotFound, CodeAgentNotFound)
	if len(h.store.Audit) != 0 {
		t.Fatalf("a 404 was audited: %+v", h.store.Audit)
	}
	for _, body := range []string{`{"bogus": 1}`, `{"reason": "` + strings.Repeat("r", 501) + `"}`} {
		wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/rotate-credential", RoleOperator, body)), http.StatusBadRequest, CodeRequestInvalid)
	}
	h.store.Lock()
	delete(h.store.Creds, credAgent)
	h.store.Unlock()
	wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/rotate-credential", RoleOperator, "")), http.StatusConflict, CodeAgentNoCredential)
	if h.store.RotationRequested(credAgent) {
		t.Fatal("a refused request asked for a rotation")
	}
	es := h.store.Audit
	if len(es) != 3 || es[2].Action != ActionCredentialRotate || es[2].Result != audit.ResultFailure || es[2].TargetID != credAgent ||
		es[2].Details["code"] != CodeAgentNoCredential || es[0].Result != audit.ResultFailure {
		t.Fatalf("the refusals' audit: %+v", es)
	}
}
