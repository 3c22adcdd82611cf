package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/rollout"
)

func TestAuthentication_MissingOrUnknownTokenIs401(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, header string
	}{
		{name: "no header", header: ""},
		{name: "unknown token", header: "Bearer not-a-token"},
		{name: "another scheme", header: "Basic " + tokens[RoleAdmin]},
		{name: "bearer without token", header: "Bearer "},
	}
	for _, c := range cases {
		r := req{method: http.MethodGet, path: "/api/v1/rollouts", header: map[string]string{}}
		if c.header != "" {
			r.header["Authorization"] = c.header
		}
		rep := h.do(r)
		wantProblem(t, rep, http.StatusUnauthorized, CodeUnauthenticated)
		if !strings.HasPrefix(rep.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q, want Bearer", c.name, rep.header.Get("WWW-Authenticate"))
		}
	}
}

func TestPermissions_403NamesTheMissingPermission(t *testing.T) {
	cases := []struct {
		role       Role
		method     string
		path, body string
		permission Permission
	}{
		{role: RoleViewer, method: "POST", path: "/api/v1/rollouts/r-1/actions/pause", body: "", permission: PermOperate},                                  // viewers read only
		{role: RoleViewer, method: "POST", path: "/api/v1/rollouts/r-1/actions/approve", body: `{"wave": 1}`, permission: PermOperate},                     // approve too
		{role: RoleViewer, method: "POST", path: "/api/v1/rollouts/r-1/actions/reject", body: `{"wave": 1}`, permission: PermOperate},                      // and reject
		{role: RoleViewer, method: "POST", path: "/api/v1/fleets/edge/actions/select-version", body: `{"version": "0.162.0"}`, permission: PermSetVersion}, // choosing a version
		{role: RoleViewer, method: "POST", path: "/api/v1/fleets/edge/actions/clear-version-selection", body: "", permission: PermSetVersion},              // and taking it back
		{role: RoleOperator, method: "POST", path: "/api/v1/revisions", body: `{"commit": "x", "files": {}}`, permission: PermApplyRevisions},              // revisions are the admin's
		{role: RoleViewer, method: "PUT", path: "/api/v1/releases/otelcol-contrib/0.163.0", body: "", permission: PermManageReleases},                      // so is the release catalogue
		{role: RoleOperator, method: "PUT", path: "/api/v1/releases/otelcol-contrib/0.163.0", body: `{"platforms": ["linux/amd64"]}`, permission: PermManageReleases},
		{role: RoleOperator, method: "DELETE", path: "/api/v1/releases/otelcol-contrib/0.161.0", body: "", permission: PermManageReleases},
	}
	for _, c := range cases {
		h := newHarness(t)
		h.applyFixture()
		before, audits := h.store.snapshot(), h.store.auditLen()
		p := wantProblem(t, h.do(req{method: c.method, path: c.path, token: tokens[c.role], body: c.body}), http.StatusForbidden, CodeForbidden)
		if p.Permission != c.permission || !strings.Contains(p.Detail, string(c.permission)) {
			t.Errorf("%s %s as %s: permission %q (%s), want %q", c.method, c.path, c.role, p.Permission, p.Detail, c.permission)
		}
		if h.store.snapshot() != before || h.store.auditLen() != audits {
			t.Errorf("%s %s: a forbidden request changed the store", c.method, c.path)
		}
	}
}

func TestGetMe_PermissionsByRole(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		role Role
		want string
	}{
		{role: RoleViewer, want: "read"}, // reads only
		{role: RoleOperator, want: "read,rollouts:operate,fleets:set_version,agents:reset_credential"},                              // spec: fleets:set_version for operator; an agent's credential reset too
		{role: RoleAdmin, want: "read,rollouts:operate,fleets:set_version,agents:reset_credential,revisions:apply,releases:manage"}, // and admin, who also applies revisions and keeps the release catalogue
	}
	for _, c := range cases {
		me := decode[meView](t, h.do(get("/api/v1/me", c.role)))
		var ps []string
		for _, p := range me.Permissions {
			ps = append(ps, string(p))
		}
		if me.Role != c.role || join(ps) != c.want || me.DisplayName == "" || me.Actor == "" {
			t.Errorf("%s: %+v, want permissions %s", c.role, me, c.want)
		}
	}
}

func TestBadInput_400WithoutChangingAnything(t *testing.T) {
	cases := []struct {
		name string
		r    req
	}{
		{name: "unknown query parameter", r: get("/api/v1/rollouts?fleets=edge", RoleViewer)},
		{name: "parameter twice", r: get("/api/v1/rollouts?kind=config&kind=version", RoleViewer)},
		{name: "limit zero", r: get("/api/v1/rollouts?limit=0", RoleViewer)},
		{name: "limit over 500", r: get("/api/v1/rollouts?limit=501", RoleViewer)},
		{name: "limit not a number", r: get("/api/v1/fleets?limit=ten", RoleViewer)},
		{name: "unknown kind", r: get("/api/v1/rollouts?kind=binary", RoleViewer)},
		{name: "unknown status", r: get("/api/v1/rollouts?status=running,sleeping", RoleViewer)},
		{name: "unknown target status", r: get("/api/v1/rollouts/r-1/targets?status=done", RoleViewer)},
		{name: "negative wave", r: get("/api/v1/rollouts/r-1/targets?wave=-1", RoleViewer)},
		{name: "foreign page token", r: get("/api/v1/rollouts?pageToken=forged", RoleViewer)},
		{name: "foreign fleet page token", r: get("/api/v1/fleets?pageToken=forged", RoleViewer)},
		{name: "audit without target", r: get("/api/v1/audit?targetType=fleet", RoleViewer)},
		{name: "query on an action", r: post("/api/v1/rollouts/r-1/actions/pause?force=1", RoleOperator, "")},
		{name: "malformed JSON", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"`)},
		{name: "unknown field", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0", "force": true}`)},
		{name: "wrong type", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": 162}`)},
		{name: "array body", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `["0.162.0"]`)},
		{name: "no body", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, "")},
		{name: "null body", r: post("/api/v1/fleets/edge/actions/select-version", RoleOperator, "null")},
		{name: "unknown field on clear", r: post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, `{"reason": "x", "why": "y"}`)},
		{name: "body on pause", r: post("/api/v1/rollouts/r-1/actions/pause", RoleOperator, `{"reason": "lunch"}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.applyFixture()
			before, audits := h.store.snapshot(), h.store.auditLen()
			wantProblem(t, h.do(c.r), http.StatusBadRequest, CodeRequestInvalid)
			if h.store.snapshot() != before || h.store.auditLen() != audits {
				t.Errorf("bad input changed the store or wrote an audit entry")
			}
		})
	}
}

func TestBadInput_MediaTypeAndSize(t *testing.T) {
	cases := []struct {
		name, body, contentType string
		status                  int
		code                    string
	}{
		{name: "text/plain", body: `{"version": "0.162.0"}`, contentType: "text/plain", status: 415, code: CodeUnsupportedMediaType},
		{name: "no content type", body: `{"version": "0.162.0"}`, contentType: "-", status: 415, code: CodeUnsupportedMediaType},
		{name: "charset is fine", body: `{"version": "0.161.0"}`, contentType: "application/json; charset=utf-8", status: 200, code: ""},
		{name: "over 1 MiB", body: `{"version": "0.162.0", "reason": "` + strings.Repeat("x", 1<<20) + `"}`, contentType: "", status: 413, code: CodeBodyTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.applyFixture()
			before, audits := h.store.snapshot(), h.store.auditLen()
			r := post("/api/v1/fleets/edge/actions/select-version", RoleOperator, c.body)
			r.contentType = c.contentType
			rep := h.do(r)
			if c.status == 200 {
				wantOK(t, rep)
				return
			}
			wantProblem(t, rep, c.status, c.code)
			if h.store.snapshot() != before || h.store.auditLen() != audits {
				t.Errorf("bad input changed the store")
			}
		})
	}
}

func TestRouting_UnknownPathAndMethod(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(get("/api/v1/nothing-here", RoleViewer)), http.StatusNotFound, CodeNotFound)
	wantProblem(t, h.do(req{method: http.MethodDelete, path: "/api/v1/rollouts", token: tokens[RoleAdmin]}), http.StatusMethodNotAllowed, CodeMethodNotAllowed)
}

// panickyCatalog fails the way a bug does.
type panickyCatalog struct{}

func (panickyCatalog) Releases(context.Context, string) (Releases, error) {
	panic("index out of range [3]")
}

func TestPanic_Is500WithoutTheStack(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Catalog = panickyCatalog{} })
	h.applyFixture()
	rep := h.do(get("/api/v1/fleets/edge/version-options", RoleViewer))
	wantProblem(t, rep, http.StatusInternalServerError, CodeInternal)
	if strings.Contains(string(rep.body), "index out of range") {
		t.Errorf("the panic value reached the client: %s", rep.body)
	}
	if rep.header.Get("X-Request-Id") == "" {
		t.Errorf("no request id to find the log entry by")
	}
}

func TestStoreError_Is500WithoutItsText(t *testing.T) {
	h := newHarness(t)
	h.store.Fail("RolloutsPage", errors.New("dynamodb: table myriarch-rollouts: AccessDenied for role arn:aws:iam::123:role/x"))
	rep := h.do(get("/api/v1/rollouts", RoleViewer))
	wantProblem(t, rep, http.StatusInternalServerError, CodeInternal)
	if strings.Contains(string(rep.body), "AccessDenied") {
		t.Errorf("the store error reached the client: %s", rep.body)
	}
}

func TestOpenAPIDocument_ServedWithoutAToken(t *testing.T) {
	h := newHarness(t)
	rep := h.do(req{method: http.MethodGet, path: "/api/v1/openapi.yaml"})
	if rep.status != http.StatusOK || !strings.Contains(string(rep.body), "operationId: selectFleetVersion") {
		t.Errorf("status %d, body starts %.60q", rep.status, rep.body)
	}
}

func TestTrustedPrincipal_FromTheAuthorizerContext(t *testing.T) {
	// The header stands in for API Gateway's requestContext.authorizer.
	trusted := func(r *http.Request) (Principal, bool) {
		var m map[string]any
		if json.Unmarshal([]byte(r.Header.Get("X-Test-Authorizer")), &m) != nil {
			return Principal{}, false
		}
		return PrincipalFromAuthorizer(m)
	}
	h := newHarness(t, func(d *Deps) { d.Trusted = trusted })
	ctxJSON, _ := json.Marshal(AuthorizerContext(operator))
	me := decode[meView](t, h.do(req{method: http.MethodGet, path: "/api/v1/me", header: map[string]string{"X-Test-Authorizer": string(ctxJSON)}}))
	if me.Actor != operator.Actor || me.Role != RoleOperator {
		t.Errorf("me %+v, want the authorizer's principal", me)
	}
	wantProblem(t, h.do(req{method: http.MethodGet, path: "/api/v1/me"}), http.StatusUnauthorized, CodeUnauthenticated)
	if me := decode[meView](t, h.do(get("/api/v1/me", RoleViewer))); me.Role != RoleViewer {
		t.Errorf("without an authorizer context the bearer token decides: %+v", me)
	}
}

func TestNew_RefusesMissingDependencies(t *testing.T) {
	if _, err := New(Deps{}); err == nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("New(Deps{}) = %v, want an error naming Store", err)
	}
}

func TestListAudit_NewestFirstInPages(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	for _, a := range []string{"pause", "resume", "pause"} {
		wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/"+a, RoleOperator, "")))
	}
	p1 := decode[page.Page[auditView]](t, h.do(get("/api/v1/audit?targetType=rollout&targetId="+id+"&limit=2", RoleViewer)))
	p2 := decode[page.Page[auditView]](t, h.do(get("/api/v1/audit?targetType=rollout&targetId="+id+"&limit=2&pageToken="+p1.Next, RoleViewer)))
	var got []string
	for _, e := range append(p1.Items, p2.Items...) {
		got = append(got, e.Action)
	}
	if join(got) != "rollout.pause,rollout.resume,rollout.pause,rollout.create" || p2.Next != "" {
		t.Errorf("entries %v (next %q), want the three actions newest first, then the planner's creation", got, p2.Next)
	}
	if p1.Items[0].ActorDisplayName != "Dana Operator" {
		t.Errorf("actor shown as %q, want the display name", p1.Items[0].ActorDisplayName)
	}
}

// TestNonObjectBodies_400AndNothingChanges: every body of the API is a JSON
// object. Where one is optional, no body or {} means "no options"; null,
// which encoding/json would decode into the options without an error, and
// every other value that is not an object are refused before anything is
// decided: no state change and no audit entry, not even a failure.
func TestNonObjectBodies_400AndNothingChanges(t *testing.T) {
	bodies := []string{"null", " null\n", "[]", `[{"wave": 1}]`, `"pause"`, `""`, "0", "1.5", "-1", "true", "false"}
	routes := []struct {
		name, path string
		status     rollout.Status // of the rollout before the request: one that admits the action
	}{
		{name: "pause", path: "/api/v1/rollouts/{id}/actions/pause", status: rollout.WaitingApproval},
		{name: "resume", path: "/api/v1/rollouts/{id}/actions/resume", status: rollout.Paused},
		{name: "approve", path: "/api/v1/rollouts/{id}/actions/approve", status: rollout.WaitingApproval},
		{name: "reject", path: "/api/v1/rollouts/{id}/actions/reject", status: rollout.WaitingApproval},
		{name: "abort", path: "/api/v1/rollouts/{id}/actions/abort", status: rollout.WaitingApproval},
		{name: "rollback", path: "/api/v1/rollouts/{id}/actions/rollback", status: rollout.WaitingApproval},
		{name: "retry-failed", path: "/api/v1/rollouts/{id}/actions/retry-failed", status: rollout.Paused},
		{name: "select-version", path: "/api/v1/fleets/edge/actions/select-version", status: rollout.WaitingApproval},
		{name: "clear-version-selection", path: "/api/v1/fleets/edge/actions/clear-version-selection", status: rollout.WaitingApproval},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			wantOK(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`)))
			h.setStatus(id, rt.status)
			path := strings.ReplaceAll(rt.path, "{id}", id)
			for _, body := range bodies {
				before, audits := h.store.snapshot(), h.store.auditLen()
				p := wantProblem(t, h.do(post(path, RoleOperator, body)), http.StatusBadRequest, CodeRequestInvalid)
				if !strings.Contains(p.Detail, "expected a JSON object") {
					t.Errorf("body %q: detail %q, want it to say an object is expected", body, p.Detail)
				}
				if got := h.rollout(id).Status; got != rt.status {
					t.Errorf("body %q: the rollout is %s, want it still %s", body, got, rt.status)
				}
				if sel, ok := h.store.Selections["edge"]; !ok || sel.Version != "0.162.0" {
					t.Errorf("body %q: the selection is %+v, want 0.162.0 still stored", body, sel)
				}
				if h.store.snapshot() != before || h.store.auditLen() != audits {
					t.Errorf("body %q changed the store or wrote an audit entry", body)
				}
			}
		})
	}
}

// TestEmptyObjectBody_IsNoOptions: {} is what no body is.
func TestEmptyObjectBody_IsNoOptions(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "{}")))
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/resume", RoleOperator, " { } ")))
	wantOK(t, h.do(post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, "{}")))
	if e := h.store.lastAudit(); e.Action != "fleet.version.clear" || e.Result != "success" {
		t.Errorf("audit %+v, want a successful clear", e)
	}
}
