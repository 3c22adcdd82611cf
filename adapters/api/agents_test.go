package api

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/rollout"
)

// liveness is the rule the functions read from the environment by
// default (adapters/setup): silent for 90 s is offline, a closed connection
// counts for 10 s, offline for 7 days is gone.
var liveness = agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Retention: 7 * 24 * time.Hour}

func withLiveness(l agent.Liveness) func(*Deps) { return func(d *Deps) { d.Liveness = l } }

// inventory seeds agents of every kind the filters tell apart, at t0:
//
//	a01 edge  online, 0.161.0, APPLIED on its desired hash, canary, host web-1
//	a02 edge  closed an hour ago, FAILED, host web-2
//	a03 core  online, 0.162.0, APPLIED but drifted (desired h2), labels.env=prod
//	a04 none  assignment error, online
//	a05 edge  connection open but silent for 2 minutes (offline by the rule)
//	a06 edge  offline for 8 days: gone
//	a07 core  APPLYING the desired hash, labels.env=prod, host localhost
//	a08 none  host localhost, offline for 5 seconds (online by the reconnect grace)
func (h *harness) inventory() {
	h.t.Helper()
	put := func(id, fleetName string, edit func(*agent.Agent)) {
		a := agent.Agent{ID: id, Fleet: fleetName, Attributes: map[string]string{"service.name": "otelcol-contrib"},
			Online: true, LastSeen: t0, ConnectedAt: t0.Add(-time.Hour), ServiceVersion: "0.161.0",
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigApplied}, DesiredHash: "h1"}
		edit(&a)
		h.store.Agents[id] = a
	}
	put("a01", "edge", func(a *agent.Agent) { a.Attributes["host.name"], a.Attributes["labels.wave"] = "web-1", "canary" })
	put("a02", "edge", func(a *agent.Agent) {
		a.Attributes["host.name"] = "web-2"
		a.Online, a.LastSeen = false, t0.Add(-time.Hour)
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigFailed, Error: "unknown receiver"}
	})
	put("a03", "core", func(a *agent.Agent) {
		a.ServiceVersion, a.DesiredHash, a.Attributes["labels.env"] = "0.162.0", "h2", "prod"
	})
	put("a04", "", func(a *agent.Agent) { a.AssignmentError = "selected by fleets core and edge" })
	put("a05", "edge", func(a *agent.Agent) { a.LastSeen = t0.Add(-2 * time.Minute) })
	put("a06", "edge", func(a *agent.Agent) { a.Online, a.LastSeen = false, t0.Add(-8*24*time.Hour) })
	put("a07", "core", func(a *agent.Agent) {
		a.Attributes["labels.env"], a.Attributes["host.name"] = "prod", "localhost"
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigApplying}
	})
	put("a08", "", func(a *agent.Agent) {
		a.Attributes["host.name"] = "localhost"
		a.Online, a.LastSeen = false, t0.Add(-5*time.Second)
	})
}

func agentIDs(as []schema.Agent) string {
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return strings.Join(ids, ",")
}

// TestListAgents_Filters: each filter alone and combined, from the source
// that holds every agent it can keep.
func TestListAgents_Filters(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	h.inventory()
	cases := []struct {
		query  string
		want   string
		source string
	}{
		{query: "", want: "a01,a02,a03,a04,a05,a06,a07,a08", source: "AgentsPage"},                                                                    // gone agents are listed, flagged
		{query: "?fleet=edge", want: "a01,a02,a05,a06", source: "AgentsOfFleet"},                                                                      // the fleet's index
		{query: "?fleet=core&online=true", want: "a03,a07", source: "AgentsOfFleet"},                                                                  // combined
		{query: "?online=true", want: "a01,a03,a04,a07,a08", source: "AgentsPage"},                                                                    // a05 is silent too long; a08 is in the grace
		{query: "?online=false", want: "a02,a05,a06", source: "AgentsPage"},                                                                           // the others
		{query: "?version=0.162.0", want: "a03", source: "AgentsPage"},                                                                                // the reported version
		{query: "?version=v0.162.0", want: "a03", source: "AgentsPage"},                                                                               // a leading v is no other version
		{query: "?configStatus=FAILED", want: "a02", source: "AgentsPage"},                                                                            // the reported status
		{query: "?configStatus=APPLYING,FAILED", want: "a02,a07", source: "AgentsPage"},                                                               // any of them
		{query: "?configStatus=drifted", want: "a03", source: "AgentsPage"},                                                                           // desired h2, reported h1
		{query: "?configStatus=APPLIED", want: "a01,a03,a04,a05,a06,a08", source: "AgentsPage"},                                                       // drifted or not
		{query: "?assignmentError=true", want: "a04", source: "AgentsWithAssignmentError"},                                                            // the sparse index
		{query: "?assignmentError=false&fleet=edge", want: "a01,a02,a05,a06", source: "AgentsOfFleet"},                                                // the fleet wins as a source
		{query: "?assignmentError=true&fleet=edge", want: "", source: "AgentsOfFleet"},                                                                // an agent with an error has no fleet
		{query: "?selector=labels.env%3Dprod", want: "a03,a07", source: "AgentsPage"},                                                                 // one condition
		{query: "?selector=labels.env%3Dprod,host.name%3Dlocalhost", want: "a07", source: "AgentsPage"},                                               // every condition
		{query: "?selector=labels.env%3D", want: "", source: "AgentsPage"},                                                                            // present and empty: none is
		{query: "?selector=" + url.QueryEscape("labels.env!=prod"), want: "a01,a02,a04,a05,a06,a08", source: "AgentsPage"},                            // missing counts as another value
		{query: "?selector=" + url.QueryEscape("host.name in (web-1, web-2)"), want: "a01,a02", source: "AgentsPage"},                                 // a set
		{query: "?selector=" + url.QueryEscape("host.name notin (web-1, localhost),labels.env!=prod"), want: "a02,a04,a05,a06", source: "AgentsPage"}, // every condition
		{query: "?selector=" + url.QueryEscape("service.version in (0.162.0)"), want: "a03", source: "AgentsPage"},                                    // the reported version
		{query: "?assigned=false", want: "a04,a08", source: "AgentsPage"},                                                                             // no fleet: with an assignment error or selected by none
		{query: "?assigned=false&assignmentError=false", want: "a08", source: "AgentsPage"},                                                           // no fleet selects it
		{query: "?assigned=true&online=false", want: "a02,a05,a06", source: "AgentsPage"},                                                             // members
		{query: "?assigned=false&fleet=edge", want: "", source: "AgentsOfFleet"},                                                                      // a fleet's agents are assigned
		{query: "?gone=false", want: "a01,a02,a03,a04,a05,a07,a08", source: "AgentsPage"},                                                             // without the gone
		{query: "?gone=true", want: "a06", source: "AgentsPage"},                                                                                      // only the gone
		{query: "?fleet=edge&online=false&gone=false", want: "a02,a05", source: "AgentsOfFleet"},                                                      // offline but still counted
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			pg := decode[page.Page[schema.Agent]](t, h.do(get("/api/v1/agents"+c.query, RoleViewer)))
			if got := agentIDs(pg.Items); got != c.want || pg.Next != "" {
				t.Errorf("agents %q (next %q), want %q", got, pg.Next, c.want)
			}
			if got := h.store.lastListed(); got != c.source {
				t.Errorf("read from %s, want %s", got, c.source)
			}
		})
	}
}

// TestListAgents_PagesMayBeShortFollowTheToken: the filter applies to each
// page of the source; following the tokens gives every agent it keeps.
func TestListAgents_PagesMayBeShortFollowTheToken(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	h.inventory()
	var got []string
	pages, short := 0, 0
	path := "/api/v1/agents?online=false&limit=2"
	for {
		pg := decode[page.Page[schema.Agent]](t, h.do(get(path, RoleViewer)))
		pages++
		if len(pg.Items) < 2 && pg.Next != "" {
			short++
		}
		for _, a := range pg.Items {
			got = append(got, a.ID)
		}
		if pg.Next == "" {
			break
		}
		path = "/api/v1/agents?online=false&limit=2&pageToken=" + url.QueryEscape(pg.Next)
	}
	if strings.Join(got, ",") != "a02,a05,a06" || pages != 4 || short == 0 {
		t.Fatalf("%v in %d pages (%d short), want a02,a05,a06 in 4 pages, some short", got, pages, short)
	}
}

// TestListAgents_BadFiltersAre400: a filter that is not one of the
// documented values lists nothing silently; a fleet no name can have is
// an empty page without asking the store.
func TestListAgents_BadFiltersAre400(t *testing.T) {
	h := newHarness(t)
	h.inventory()
	for _, q := range []string{
		"?online=yes", "?gone=1", "?assignmentError=TRUE", "?configStatus=BROKEN", "?configStatus=applied",
		"?selector=labels.env", "?selector=%3Dprod", "?selector=a%3D1,a%3D2", "?limit=0", "?pageToken=forged",
		"?status=online", "?online=true&online=false", "?assigned=no",
		"?selector=" + url.QueryEscape("a in (b"), "?selector=" + url.QueryEscape("a==b"), "?selector=" + url.QueryEscape("a!="),
		"?selector=" + url.QueryEscape("a in ()"), "?selector=" + url.QueryEscape("a=1,a="), "?selector=%3D",
	} {
		t.Run(q, func(t *testing.T) {
			wantProblem(t, h.do(get("/api/v1/agents"+q, RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
		})
	}
	long := strings.Repeat("e", 5000)
	for _, f := range []string{"EDGE", long} {
		pg := decode[page.Page[schema.Agent]](t, h.do(get("/api/v1/agents?fleet="+f, RoleViewer)))
		if len(pg.Items) != 0 {
			t.Errorf("fleet %.10s: %d agents, want none", f, len(pg.Items))
		}
	}
	h.store.Fail("AgentsPage", errors.New("dynamodb: scan the agents: AccessDenied"))
	wantProblem(t, h.do(get("/api/v1/agents", RoleViewer)), http.StatusInternalServerError, CodeInternal)
}

// TestGetAgent_ByIDOrDisplayName: the instance UID first, then the
// display name; a name of several agents is a 409 naming them all.
func TestGetAgent_ByIDOrDisplayName(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	h.inventory()
	h.store.Agents["0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"] = agent.Agent{ID: "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d",
		Attributes: map[string]string{"service.instance.id": "collector-a", "host.name": ""}, LastSeen: t0}
	h.store.Agents["k8s"] = agent.Agent{ID: "k8s", Attributes: map[string]string{"host.name": "ns/pod 1"}, LastSeen: t0}
	found := []struct {
		path, want string
	}{
		{path: "/api/v1/agents/a01", want: "a01"},                                          // by id
		{path: "/api/v1/agents/web-2", want: "a02"},                                        // by host.name
		{path: "/api/v1/agents/collector-a", want: "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"}, // by service.instance.id, host.name empty
		{path: "/api/v1/agents/0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d", want: "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"},
		{path: "/api/v1/agents/ns%2Fpod%201", want: "k8s"}, // a name with a slash and a space, escaped
	}
	for _, c := range found {
		a := decode[schema.AgentDetail](t, h.do(get(c.path, RoleViewer)))
		if a.ID != c.want {
			t.Errorf("%s: agent %q, want %q", c.path, a.ID, c.want)
		}
	}
	p := wantProblem(t, h.do(get("/api/v1/agents/localhost", RoleViewer)), http.StatusConflict, CodeAgentAmbiguous)
	// The candidates with what tells them apart: fleet, state and the
	// attributes whose values differ.
	if want := `the display name "localhost" names 2 agents: a07 (fleet core, online, labels.env=prod), a08 (no fleet, online, no labels.env); ask for one of them by its id`; p.Detail != want {
		t.Errorf("detail %q, want %q", p.Detail, want)
	}
	if len(p.Candidates) != 2 || p.Candidates[0].ID != "a07" || p.Candidates[0].Fleet != "core" || !p.Candidates[0].Online ||
		p.Candidates[0].DifferingAttributes["labels.env"] != "prod" || p.Candidates[1].ID != "a08" || p.Candidates[1].Fleet != "" {
		t.Errorf("candidates %+v, want a07 (core, labels.env prod) and a08", p.Candidates)
	}
	wantProblem(t, h.do(get("/api/v1/agents/web-9", RoleViewer)), http.StatusNotFound, CodeAgentNotFound)

	// More than ten agents of one name: the first ten, and that there are more.
	for _, id := range []string{"b01", "b02", "b03", "b04", "b05", "b06", "b07", "b08", "b09", "b10", "b11"} {
		h.store.Agents[id] = agent.Agent{ID: id, Attributes: map[string]string{"host.name": "edge"}}
	}
	p = wantProblem(t, h.do(get("/api/v1/agents/edge", RoleViewer)), http.StatusConflict, CodeAgentAmbiguous)
	if !strings.Contains(p.Detail, "more than 10 agents, among them: b01 (no fleet, offline), b02 (no fleet, offline)") || strings.Contains(p.Detail, "b11") || len(p.Candidates) != 10 {
		t.Errorf("detail %q, %d candidates, want the first ten", p.Detail, len(p.Candidates))
	}
}

// TestGetAgent_ImpossibleRefsAre404: a value no agent can have never
// reaches the store (which would refuse it as a key: a 500).
func TestGetAgent_ImpossibleRefsAre404(t *testing.T) {
	h := newHarness(t)
	h.inventory()
	for _, path := range []string{
		"/api/v1/agents/" + strings.Repeat("x", MaxAgentRefLength+1), // too long
		"/api/v1/agents/" + strings.Repeat("é", 5000),                // too long in bytes too
		"/api/v1/agents/a%01b",                                       // a control character
		"/api/v1/agents/a%2F%0A",                                     // one behind an escaped slash
	} {
		p := wantProblem(t, h.do(get(path, RoleViewer)), http.StatusNotFound, CodeAgentNotFound)
		if !strings.Contains(p.Detail, "printable") {
			t.Errorf("%.40s: detail %q, want the rule", path, p.Detail)
		}
	}
	wantProblem(t, h.do(get("/api/v1/agents/"+strings.Repeat("x", MaxAgentRefLength), RoleViewer)), http.StatusNotFound, CodeAgentNotFound)
	wantProblem(t, h.do(get("/api/v1/agents/a01?x=1", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
}

// An agent without the ReportsHealth capability sends no health: its view
// says so, instead of a "healthy: false" that would read as a failure.
func TestGetAgent_ReportsNoHealth(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	h.applyFixture()
	h.store.Lock()
	e2 := h.store.Agents["e2"]
	e2.Capabilities = agent.CapabilityReportsHealth - 1 // every capability below it, not ReportsHealth
	e2.Health = agent.Health{}
	h.store.Agents["e2"] = e2
	h.store.Unlock()
	if hl := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/e2", RoleViewer))).Health; hl.Reported || hl.Healthy {
		t.Errorf("health %+v, want reported false", hl)
	}
	if hl := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/e1", RoleViewer))).Health; !hl.Reported {
		t.Errorf("health %+v of an agent that reports health, want reported true", hl)
	}
}

// TestGetAgent_TheWholeView: every field of the Agent view, and the
// current targets of each kind with their rollout's status.
func TestGetAgent_TheWholeView(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	id := h.applyFixture() // e1..e4 in edge, a configuration rollout
	h.pass(id)             // e1, the canary, is started
	h.store.Lock()
	e1 := h.store.Agents["e1"]
	e1.Attributes["host.name"] = "edge-gw-01"
	e1.TargetVersion = "0.162.0"
	e1.EffectiveHash = "eff"
	e1.Health = agent.Health{Healthy: false, Status: "StatusRecoverableError", LastError: "exporter otlp: connection refused",
		Components: &agent.ComponentSummary{Total: 6, UnhealthyCount: 1, Unhealthy: []string{"pipeline:traces/exporter:otlp"}}}
	h.store.Agents["e1"] = e1
	h.store.Unlock()
	seedVersionRollout(h, "v-1") // e1 verifying 0.162.0 in a running version rollout

	a := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/edge-gw-01", RoleViewer)))
	if a.ID != "e1" || a.DisplayName != "edge-gw-01" || a.HostName != "edge-gw-01" || a.Fleet != "edge" || a.Version != "0.161.0" ||
		a.TargetVersion != "0.162.0" || !a.Online || a.Gone || a.LastSeen == nil || !a.LastSeen.Equal(t0) || a.ConnectedAt == nil ||
		a.Attributes["labels.wave"] != "canary" {
		t.Errorf("agent %+v", a.Agent)
	}
	if c := a.Config; c.DesiredHash == "old" || c.ReportedHash != "old" || c.Status != agent.ConfigApplied || !c.Drifted || c.EffectiveHash != "eff" {
		t.Errorf("config %+v, want the new desired hash, old reported, effective eff, drifted", c)
	}
	if hl := a.Health; hl.Healthy || hl.LastError == "" || hl.Components == nil || hl.Components.Total != 6 ||
		strings.Join(hl.Components.Unhealthy, ",") != "pipeline:traces/exporter:otlp" {
		t.Errorf("health %+v", hl)
	}
	if len(a.Targets) != 2 {
		t.Fatalf("targets %+v, want one per kind", a.Targets)
	}
	cfg, ver := a.Targets[0], a.Targets[1]
	if cfg.RolloutID != id || cfg.Kind != "config" || cfg.Status != rollout.TargetInProgress || cfg.Wave != 0 ||
		cfg.ToRef != a.Config.DesiredHash || cfg.RolloutStatus != rollout.Running || !cfg.Active {
		t.Errorf("configuration target %+v", cfg)
	}
	if ver.RolloutID != "v-1" || ver.Kind != "version" || ver.Status != rollout.TargetVerifying || ver.ToRef != "0.162.0" || !ver.Active {
		t.Errorf("version target %+v", ver)
	}
	// An agent that never was a target has none, as an empty list.
	if u1 := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/u1", RoleViewer))); u1.Targets == nil || len(u1.Targets) != 0 || u1.Fleet != "" {
		t.Errorf("u1 %+v, want no targets and no fleet", u1)
	}
	// A finished rollout's target is shown, not active.
	h.store.Lock()
	r := h.store.Rollouts["v-1"]
	r.Status = rollout.Aborted
	h.store.Rollouts["v-1"] = r
	h.store.Unlock()
	if a := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/e1", RoleViewer))); a.Targets[1].Active || a.Targets[1].RolloutStatus != rollout.Aborted {
		t.Errorf("after the abort %+v", a.Targets[1])
	}
}

// TestAgents_LivenessAsRolloutsJudge: silent beyond 90 s is offline
// although the connection is open; offline beyond the retention is gone;
// without a rule (the zero value) the stored connection state is trusted.
func TestAgents_LivenessAsRolloutsJudge(t *testing.T) {
	h := newHarness(t, withLiveness(liveness))
	h.inventory()
	view := func(h *harness, id string) schema.AgentDetail {
		return decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/"+id, RoleViewer)))
	}
	cases := []struct {
		id           string
		online, gone bool
	}{
		{id: "a01", online: true, gone: false},  // heard from now
		{id: "a05", online: false, gone: false}, // open, but silent for 2 minutes
		{id: "a08", online: true, gone: false},  // closed 5 s ago: the reconnect grace
		{id: "a02", online: false, gone: false}, // closed an hour ago
		{id: "a06", online: false, gone: true},  // closed 8 days ago
	}
	for _, c := range cases {
		if a := view(h, c.id); a.Online != c.online || a.Gone != c.gone {
			t.Errorf("%s: online %v gone %v, want %v %v", c.id, a.Online, a.Gone, c.online, c.gone)
		}
	}
	h.advance(90 * time.Second) // a01 was heard from at t0: at 90 s still online, then not
	if !view(h, "a01").Online {
		t.Error("a01 is offline at exactly the silence limit")
	}
	h.advance(time.Millisecond)
	if view(h, "a01").Online {
		t.Error("a01 is online past the silence limit")
	}

	trusting := newHarness(t) // no rule: the stored flag
	trusting.inventory()
	if a := view(trusting, "a05"); !a.Online || a.Gone {
		t.Errorf("a05 without a rule: online %v gone %v, want the stored online", a.Online, a.Gone)
	}
	if a := view(trusting, "a06"); a.Online || a.Gone {
		t.Errorf("a06 without a rule: online %v gone %v, want offline, never gone", a.Online, a.Gone)
	}
}

// TestListRolloutTargets_DisplayNames: each target names its agent as
// people know it, read in one batch; an agent deleted since falls back to
// its id.
func TestListRolloutTargets_DisplayNames(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	h.store.Lock()
	for _, e := range []string{"e1", "e2"} {
		a := h.store.Agents[e]
		a.Attributes["host.name"] = "edge-gw-" + e
		h.store.Agents[e] = a
	}
	delete(h.store.Agents, "e4")
	h.store.Unlock()
	pg := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/"+id+"/targets", RoleViewer)))
	var got []string
	for _, tv := range pg.Items {
		got = append(got, tv.AgentID+"="+tv.DisplayName)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "e1=edge-gw-e1 e2=edge-gw-e2 e3=e3 e4=e4" {
		t.Errorf("targets %v", got)
	}
}

// The detail of a collector names the updater that installs its versions,
// and the detail of an updater the collector it serves; a collector that
// takes its own packages has no updater to show.
func TestGetAgent_UpdaterLink(t *testing.T) {
	h := newHarness(t)
	const col, lone = "018f3a10-2233-7444-8555-000000000001", "018f3a10-2233-7444-8555-000000000009"
	h.store.Agents[col] = agent.Agent{ID: col, Capabilities: agent.CapabilityReportsHealth, Attributes: map[string]string{"host.name": "vm-1"}}
	h.store.Agents["u1"] = agent.Agent{ID: "u1", Online: true, LastSeen: t0,
		Attributes: map[string]string{"host.name": "vm-1-updater", agent.AttrLinkedCollector: col}}
	h.store.Agents["u2"] = agent.Agent{ID: "u2", Attributes: map[string]string{agent.AttrLinkedCollector: lone}}
	h.store.Agents["self"] = agent.Agent{ID: "self", Capabilities: agent.CapabilityReportsHealth | agent.CapabilityAcceptsPackages}

	c := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/"+col, RoleViewer)))
	if c.Updater == nil || c.Updater.ID != "u1" || c.Updater.DisplayName != "vm-1-updater" || !c.Updater.Known || c.Serves != nil {
		t.Fatalf("collector: updater %+v serves %+v", c.Updater, c.Serves)
	}
	u := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/u1", RoleViewer)))
	if u.Serves == nil || u.Serves.ID != col || u.Serves.DisplayName != "vm-1" || !u.Serves.Known || u.Updater != nil {
		t.Fatalf("updater: serves %+v updater %+v", u.Serves, u.Updater)
	}
	if l := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/u2", RoleViewer))); l.Serves == nil || l.Serves.Known || l.Serves.ID != lone {
		t.Fatalf("an updater of an unknown collector: %+v", l.Serves)
	}
	if s := decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/self", RoleViewer))); s.Updater != nil {
		t.Fatalf("a collector that takes its own packages shows updater %+v", s.Updater)
	}
}
