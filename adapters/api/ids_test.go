package api

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
)

// TestPathIDs_ImpossibleAre404EmptyAre400 sends ids and names that no
// object can have to every operation with one in its path. The in-memory
// store refuses them as DynamoDB does (keyError), so an id that reached
// it would answer 500.
func TestPathIDs_ImpossibleAre404EmptyAre400(t *testing.T) {
	longID := strings.Repeat("r", 5000)
	longName := strings.Repeat("e", 5000)
	cases := []struct {
		name   string
		r      req
		status int
		code   string
	}{
		{name: "long rollout id", r: get("/api/v1/rollouts/"+longID, RoleViewer), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, targets", r: get("/api/v1/rollouts/"+longID+"/targets", RoleViewer), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, pause", r: post("/api/v1/rollouts/"+longID+"/actions/pause", RoleOperator, ""), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, resume", r: post("/api/v1/rollouts/"+longID+"/actions/resume", RoleOperator, ""), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, approve", r: post("/api/v1/rollouts/"+longID+"/actions/approve", RoleOperator, `{"wave": 1}`), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, abort", r: post("/api/v1/rollouts/"+longID+"/actions/abort", RoleOperator, ""), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, rollback", r: post("/api/v1/rollouts/"+longID+"/actions/rollback", RoleOperator, ""), status: 404, code: CodeRolloutNotFound},
		{name: "long rollout id, retry-failed", r: post("/api/v1/rollouts/"+longID+"/actions/retry-failed", RoleOperator, ""), status: 404, code: CodeRolloutNotFound},
		{name: "rollout id one over the limit", r: get("/api/v1/rollouts/"+strings.Repeat("r", MaxRolloutIDLength+1), RoleViewer), status: 404, code: CodeRolloutNotFound},
		{name: "rollout id with a space", r: get("/api/v1/rollouts/r%201", RoleViewer), status: 404, code: CodeRolloutNotFound},
		{name: "rollout id with the store's separator", r: get("/api/v1/rollouts/lock%23edge", RoleViewer), status: 404, code: CodeRolloutNotFound},
		{name: "empty rollout id, targets", r: get("/api/v1/rollouts//targets", RoleViewer), status: 400, code: CodeRequestInvalid},
		{name: "empty rollout id, pause", r: post("/api/v1/rollouts//actions/pause", RoleOperator, ""), status: 400, code: CodeRequestInvalid},
		{name: "long fleet name", r: get("/api/v1/fleets/"+longName, RoleViewer), status: 404, code: CodeFleetNotFound},
		{name: "long fleet name, options", r: get("/api/v1/fleets/"+longName+"/version-options", RoleViewer), status: 404, code: CodeFleetNotFound},
		{name: "long fleet name, select", r: post("/api/v1/fleets/"+longName+"/actions/select-version", RoleOperator, `{"version": "0.162.0"}`), status: 404, code: CodeFleetNotFound},
		{name: "long fleet name, clear", r: post("/api/v1/fleets/"+longName+"/actions/clear-version-selection", RoleOperator, ""), status: 404, code: CodeFleetNotFound},
		{name: "fleet name one over the limit", r: get("/api/v1/fleets/"+strings.Repeat("e", fleet.MaxNameLength+1), RoleViewer), status: 404, code: CodeFleetNotFound},
		{name: "fleet name in capitals", r: get("/api/v1/fleets/EDGE", RoleViewer), status: 404, code: CodeFleetNotFound},
		{name: "fleet name ending in '-'", r: get("/api/v1/fleets/edge-", RoleViewer), status: 404, code: CodeFleetNotFound},
		{name: "empty fleet name, options", r: get("/api/v1/fleets//version-options", RoleViewer), status: 400, code: CodeRequestInvalid},
		{name: "empty fleet name, select", r: post("/api/v1/fleets//actions/select-version", RoleOperator, `{"version": "0.162.0"}`), status: 400, code: CodeRequestInvalid},
		{name: "long agent id", r: get("/api/v1/agents/"+longID, RoleViewer), status: 404, code: CodeAgentNotFound},
		{name: "agent id one over the limit", r: get("/api/v1/agents/"+strings.Repeat("a", MaxAgentRefLength+1), RoleViewer), status: 404, code: CodeAgentNotFound},
		{name: "agent name with a control character", r: get("/api/v1/agents/web%091", RoleViewer), status: 404, code: CodeAgentNotFound},
		{name: "the permission comes first", r: post("/api/v1/rollouts/"+longID+"/actions/pause", RoleViewer, ""), status: 403, code: CodeForbidden},
	}
	h := newHarness(t)
	h.applyFixture()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, audits := h.store.snapshot(), h.store.auditLen()
			p := wantProblem(t, h.do(c.r), c.status, c.code)
			if len(p.Detail) > 400 {
				t.Errorf("the detail repeats the whole value: %d characters", len(p.Detail))
			}
			if h.store.snapshot() != before || h.store.auditLen() != audits {
				t.Errorf("an impossible id changed the store or wrote an audit entry")
			}
		})
	}
}

// TestPathIDs_TheLongestPossibleIDsStillWork: the limits are inclusive,
// and every character of the rules reaches the store.
func TestPathIDs_TheLongestPossibleIDsStillWork(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	id := "r-" + strings.Repeat("0123456789abcdef", 8)[:MaxRolloutIDLength-2]
	seedVersionRollout(h, id)
	wantOK(t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	wantOK(t, h.do(get("/api/v1/rollouts/"+id+"/targets", RoleViewer)))
	// Well-formed and unknown: the store answers, as for any unknown id.
	wantProblem(t, h.do(get("/api/v1/rollouts/r-2026.12.01T09:00:00_A", RoleViewer)), http.StatusNotFound, CodeRolloutNotFound)

	name := "edge-" + strings.Repeat("x", fleet.MaxNameLength-5)
	f := h.store.FleetsByName["edge"]
	f.Name = name
	h.store.FleetsByName[name] = f
	wantOK(t, h.do(get("/api/v1/fleets/"+name, RoleViewer)))
	wantOK(t, h.do(get("/api/v1/fleets/"+name+"/version-options", RoleViewer)))
}

// TestPathIDs_EveryRouteParameterIsJudged walks the router: a {param} that
// names an object needs a rule in pathParams, or its values reach the
// store unchecked.
func TestPathIDs_EveryRouteParameterIsJudged(t *testing.T) {
	judgedByTheHandler := map[string]bool{"action": true} // rolloutAction: 404 action_unknown
	h := newHarness(t)
	routes, ok := h.srv.Config.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the handler is a %T, not a chi router", h.srv.Config.Handler)
	}
	param := regexp.MustCompile(`\{([^}:]+)`)
	seen := 0
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		for _, m := range param.FindAllStringSubmatch(route, -1) {
			seen++
			if _, ok := ruleOf(route, m[1]); !ok && !judgedByTheHandler[m[1]] {
				t.Errorf("%s %s: the path parameter {%s} has no rule in pathParams", method, route, m[1])
			}
		}
		return nil
	})
	if err != nil || seen == 0 {
		t.Fatalf("walk: %v, %d parameters seen", err, seen)
	}
}

// TestFilters_ImpossibleNamesMatchNothing: a list filter that no object
// can match answers an empty page without asking the store.
func TestFilters_ImpossibleNamesMatchNothing(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name, path string
	}{
		{name: "rollouts of a long fleet name", path: "/api/v1/rollouts?fleet=" + long},
		{name: "rollouts of a fleet name in capitals", path: "/api/v1/rollouts?fleet=EDGE"},
		{name: "audit of a long fleet name", path: "/api/v1/audit?targetType=fleet&targetId=" + long},
		{name: "audit of a long rollout id", path: "/api/v1/audit?targetType=rollout&targetId=" + long},
		{name: "audit of a long commit", path: "/api/v1/audit?targetType=revision&targetId=" + long},
		{name: "audit of a long type", path: "/api/v1/audit?targetType=" + long + "&targetId=edge"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := h.do(get(c.path, RoleViewer))
			wantOK(t, rep)
			if p := decode[page.Page[map[string]any]](t, rep); len(p.Items) != 0 || p.Next != "" {
				t.Errorf("page %+v, want an empty one", p)
			}
		})
	}
	// Possible values still reach the store.
	if p := decode[page.Page[rolloutView]](t, h.do(get("/api/v1/rollouts?fleet=edge", RoleViewer))); len(p.Items) != 1 {
		t.Errorf("rollouts of edge: %d, want the fixture's", len(p.Items))
	}
	if p := decode[page.Page[auditView]](t, h.do(get("/api/v1/audit?targetType=rollout&targetId="+id, RoleViewer))); len(p.Items) == 0 {
		t.Errorf("no audit entries for rollout %s, want its creation", id)
	}
}
