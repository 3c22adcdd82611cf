package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/api/schema"
	"github.com/myriarch/myriarch/pkg/audit"
)

func (m *memStore) ResetAgentCredential(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("ResetAgentCredential"); err != nil {
		return false, false, err
	}
	if _, ok := m.agents[id]; !ok {
		return false, false, nil
	}
	had = m.credsOf[id]
	delete(m.credsOf, id)
	return true, had, nil
}

const credAgent = "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"

func credHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.store.agents[credAgent] = agent.Agent{ID: credAgent, Attributes: map[string]string{"host.name": "web-1"}}
	h.store.credsOf = map[string]bool{credAgent: true}
	return h
}

// reset-credential: operators and admins; the credential is forgotten, the
// reset audited with its actor and reason; by id or display name.
func TestResetCredential_ForgetsAndAudits(t *testing.T) {
	h := credHarness(t)
	wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/reset-credential", RoleViewer, "")), http.StatusForbidden, CodeForbidden)
	if h.store.credsOf[credAgent] != true {
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
	if h.store.credsOf[credAgent] {
		t.Fatal("the credential is still bound")
	}
	again := decode[schema.AgentCredentialReset](t, h.do(post("/api/v1/agents/"+credAgent+"/actions/reset-credential", RoleAdmin, "")))
	if again.HadCredential {
		t.Fatal("a second reset found a credential")
	}
	es := h.store.audit
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
	if len(h.store.audit) != 0 {
		t.Fatalf("a 404 was audited: %+v", h.store.audit)
	}
	for _, body := range []string{`{"bogus": 1}`, `[]`, `{"reason": "` + strings.Repeat("r", 501) + `"}`} {
		wantProblem(t, h.do(post("/api/v1/agents/web-1/actions/reset-credential", RoleOperator, body)), http.StatusBadRequest, CodeRequestInvalid)
	}
	if !h.store.credsOf[credAgent] {
		t.Fatal("a refused request reset the credential")
	}
	if n := len(h.store.audit); n != 3 || h.store.audit[0].Result != audit.ResultFailure || h.store.audit[0].TargetID != "web-1" {
		t.Fatalf("the refusals' audit: %+v", h.store.audit)
	}
}
