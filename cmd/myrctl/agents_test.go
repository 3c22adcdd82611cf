package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// inventory is a fleet as operators meet it, judged by the default
// liveness rule: the edge rollout has started its canary; edge-gw-02 is
// silent; edge-gw-03 failed its configuration; an agent that two fleets
// select belongs to none; an old one is gone.
func inventory(t *testing.T) (*cli, string) {
	c := &cli{t: t, now: t0, srv: clienttest.Start(t, t0, clienttest.WithLiveness(agent.Liveness{
		Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Retention: 7 * 24 * time.Hour}))}
	id := c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id) // e01, the canary, is sent the new configuration
	for i, id := range []string{"e01", "e02", "e03"} {
		c.srv.UpdateAgent(id, func(a *agent.Agent) { a.Attributes["host.name"] = "edge-gw-0" + string(rune('1'+i)) })
	}
	c.srv.UpdateAgent("e01", func(a *agent.Agent) {
		a.Health = agent.Health{Healthy: false, Status: "StatusRecoverableError", LastError: "exporter otlp: connection refused",
			Components: &agent.ComponentSummary{Total: 6, UnhealthyCount: 1, Unhealthy: []string{"pipeline:traces/exporter:otlp"}}}
	})
	c.srv.UpdateAgent("e02", func(a *agent.Agent) {
		a.LastSeen = t0.Add(-5 * time.Minute)
		a.Capabilities = 0x1 | 0x2 // ReportsStatus, AcceptsRemoteConfig: no ReportsHealth
	})
	c.srv.UpdateAgent("e03", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "old", Status: agent.ConfigFailed, Error: "unknown receiver"}
		a.EffectiveHash = "6f1d0c3e9a2b4d5f6f1d0c3e9a2b4d5f6f1d0c3e9a2b4d5f6f1d0c3e9a2b4d5f"
	})
	both := clienttest.HealthyAgent("x01", map[string]string{"host.name": "edge-gw-01"}, "", t0)
	both.AssignmentError = "selected by fleets core and edge"
	c.srv.PutAgent(both)
	old := clienttest.HealthyAgent("z01", map[string]string{"host.name": "retired-1"}, "old", t0)
	old.Online, old.LastSeen, old.ServiceVersion = false, t0.Add(-10*24*time.Hour), "0.150.0"
	c.srv.PutAgent(old)
	return c, id
}

func TestAgentsList(t *testing.T) {
	c, _ := inventory(t)
	c.run(clienttest.ViewerToken, "agents", "list").ok(t).has(t,
		"NAME        ID   FLEET  STATE    VERSION  CONFIG            HEALTH                      LAST SEEN\n",
		"edge-gw-01  e01  edge   online   0.161.0  APPLIED, drifted  unhealthy (1/6 components)  2026-11-30T09:00:00Z\n", // by name, then id
		"edge-gw-01  x01  -      online   0.161.0  APPLIED           healthy                     2026-11-30T09:00:00Z\n",
		"edge-gw-02  e02  edge   offline  0.161.0  APPLIED           no health reports           2026-11-30T08:55:00Z\n",
		"edge-gw-03  e03  edge   online   0.161.0  FAILED            healthy                     2026-11-30T09:00:00Z\n",
		"retired-1   z01  -      gone     0.150.0  APPLIED           healthy                     2026-11-20T09:00:00Z\n")
	filters := []struct {
		args []string
		want string
	}{
		{args: nil, want: "e01 e02 e03 x01 z01"},                                                                     // everyone, the gone included
		{args: []string{"--fleet", "edge"}, want: "e01 e02 e03"},                                                     // a fleet
		{args: []string{"--online"}, want: "e01 e03 x01"},                                                            // by the liveness rule: e02 is silent
		{args: []string{"--offline"}, want: "e02 z01"},                                                               // the gone are offline too
		{args: []string{"--version", "0.150.0"}, want: "z01"},                                                        // the reported version
		{args: []string{"--selector", "labels.wave=canary"}, want: "e01"},                                            // attributes
		{args: []string{"--assignment-errors"}, want: "x01"},                                                         // in no fleet although selected
		{args: []string{"--unassigned"}, want: "x01 z01"},                                                            // in no fleet, selected or not
		{args: []string{"--selector", "labels.wave!=canary,host.name in (edge-gw-02, edge-gw-03)"}, want: "e02 e03"}, // the forms of policies
		{args: []string{"--config-status", "FAILED,drifted"}, want: "e01 e03"},
		{args: []string{"--fleet", "edge", "--online", "--limit", "1"}, want: "e01"},
	}
	for _, f := range filters {
		page := decodeOut[client.Page[client.Agent]](t, c.run(clienttest.ViewerToken, append([]string{"agents", "list", "-o", "json"}, f.args...)...).ok(t))
		var ids []string
		for _, a := range page.Items {
			ids = append(ids, a.ID)
		}
		if got := strings.Join(ids, " "); got != f.want {
			t.Errorf("%v: %s, want %s", f.args, got, f.want)
		}
	}
	c.sameAsAPI(c.run(clienttest.ViewerToken, "agents", "list", "-o", "json").ok(t), "/api/v1/agents")
	c.run(clienttest.ViewerToken, "agents", "list", "--fleet", "core").ok(t).has(t, "no agents")
	c.run(clienttest.ViewerToken, "agents", "list", "--online", "--offline").usage(t, "--online and --offline")
	c.run(clienttest.ViewerToken, "agents", "list", "--config-status", "broken").usage(t, `--config-status "broken" is not one of APPLIED, APPLYING, FAILED, drifted`)
	c.run(clienttest.ViewerToken, "agents", "list", "--limit", "-1").usage(t, "--limit")
	c.run(clienttest.ViewerToken, "agents", "list", "--selector", "labels.wave").refused(t, `400 request_invalid: selector: condition 1 "labels.wave": expected key=value, key!=value, key in (a, b) or key notin (a, b)`)
}

func TestAgentsGet(t *testing.T) {
	c, rollout := inventory(t)
	c.run(clienttest.ViewerToken, "agents", "get", "edge-gw-03").ok(t).has(t,
		"Agent       edge-gw-03\n",
		"ID          e03\n",
		"Fleet       edge\n",
		"State       online · last seen 2026-11-30T09:00:00Z · connected 2026-11-30T09:00:00Z\n",
		"Version     0.161.0 (the target)\n",
		"Config      FAILED · desired old · reported old · effective 6f1d0c3e9a2b · unknown receiver\n",
		"Health      healthy · StatusOK\n",
		"Components  none reported\n",
		"Attributes\n",
		"  host.name     edge-gw-03\n",
		"  labels.fleet  edge\n",
		"Targets\n",
		"  ROLLOUT  KIND    WAVE  STATUS   TO            ROLLOUT STATUS\n",
		"  "+rollout+"   config  1     pending  0bbfc5ca6bc6  running\n")
	c.run(clienttest.ViewerToken, "agents", "get", "e01").ok(t).has(t,
		"Agent       edge-gw-01\n",
		"Config      APPLIED, drifted · desired 0bbfc5ca6bc6 · reported old · effective -\n",
		"Health      unhealthy (1/6 components) · StatusRecoverableError · exporter otlp: connection refused\n",
		"Components  6, 1 unhealthy: pipeline:traces/exporter:otlp\n",
		"  "+rollout+"   config  0     in_progress  0bbfc5ca6bc6  running\n")
	c.run(clienttest.ViewerToken, "agents", "get", "retired-1").ok(t).has(t, "Fleet       - (no fleet selects it)\n",
		"State       gone · last seen 2026-11-20T09:00:00Z", "Targets: none\n")
	c.run(clienttest.ViewerToken, "agents", "get", "x01").ok(t).has(t, "Fleet       - (selected by fleets core and edge)\n")
	c.sameAsAPI(c.run(clienttest.ViewerToken, "agents", "get", "edge-gw-03", "-o", "json").ok(t), "/api/v1/agents/e03")
	// A shared name: the candidates, with what tells them apart.
	r := c.run(clienttest.ViewerToken, "agents", "get", "edge-gw-01")
	want := `myrctl: 409 agent_ambiguous: 2 agents are named "edge-gw-01"; ask again by one of these ids:
  ID   FLEET  STATE   LAST SEEN             labels.fleet  labels.wave
  e01  edge   online  2026-11-30T09:00:00Z  edge          canary
  x01  -      online  2026-11-30T09:00:00Z  -             -
`
	if r.code != 1 || r.stderr != want {
		t.Fatalf("a shared name: exit %d stderr:\n%s\nwant 1 and:\n%s", r.code, r.stderr, want)
	}
	p := decodeOut[client.Problem](t, c.run(clienttest.ViewerToken, "agents", "get", "edge-gw-01", "-o", "json"))
	if !strings.Contains(p.Detail, "e01 (fleet edge, online, labels.fleet=edge, labels.wave=canary), x01 (no fleet, online, no labels.fleet, no labels.wave)") ||
		len(p.Candidates) != 2 {
		t.Fatalf("-o json: problem %+v, want the API's with both candidates", p)
	}
	c.run(clienttest.ViewerToken, "agents", "get", "nobody").refused(t, `404 agent_not_found: no agent has the id or display name "nobody"`)
	// a collector without AcceptsPackages and the myriarch-updater beside it
	const col = "018f3a10-2233-7444-8555-000000000001"
	sup := clienttest.HealthyAgent(col, map[string]string{"host.name": "vm-7"}, "", t0)
	sup.Capabilities = agent.CapabilityReportsHealth
	c.srv.PutAgent(sup)
	upd := clienttest.HealthyAgent("u01", map[string]string{"host.name": "vm-7-updater", agent.AttrLinkedCollector: col}, "", t0)
	c.srv.PutAgent(upd)
	c.run(clienttest.ViewerToken, "agents", "get", "vm-7").ok(t).has(t, "Updater     vm-7-updater (u01) · online\n")
	c.run(clienttest.ViewerToken, "agents", "get", "u01").ok(t).has(t, "Serves      vm-7 ("+col+") · online\n")
	c.run(clienttest.ViewerToken, "agents", "get").usage(t, "accepts 1 arg(s)")
	c.run(clienttest.ViewerToken, "agents", "frobnicate").usage(t, `unknown command "frobnicate"`)
}

// TestRolloutTargetsAndWatch_ShowNames: targets are shown by the names
// people know; -o json keeps the id beside the name.
func TestRolloutTargetsAndWatch_ShowNames(t *testing.T) {
	c, id := inventory(t)
	c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).has(t,
		"AGENT       WAVE  STATUS       FROM  TO            DETAIL\n",
		"edge-gw-01  0     in_progress  old   0bbfc5ca6bc6\n",
		"edge-gw-02  1     pending      old   0bbfc5ca6bc6\n")
	page := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "-o", "json").ok(t))
	if len(page.Items) != 3 || page.Items[0].AgentID != "e01" || page.Items[0].DisplayName != "edge-gw-01" {
		t.Fatalf("targets %+v", page.Items)
	}

	r := c.run(clienttest.ViewerToken, "watch", id)
	(result{stdout: frames(r.stdout)[0]}).has(t, "In progress (1)", "    edge-gw-01  wave 0", "Pending (2)", "    edge-gw-02  wave 1", "    edge-gw-03  wave 1")
	rec := decodeOut[watchRecord](t, c.run(clienttest.ViewerToken, "watch", id, "-o", "json"))
	if len(rec.Targets) != 3 || rec.Targets[0].AgentID != "e01" || rec.Targets[0].DisplayName != "edge-gw-01" {
		t.Fatalf("watch record targets %+v", rec.Targets)
	}
}

// TestNamesCollide_IDsTellThemApart: agents list always shows the whole id
// (what agents get takes), so two agents of one name are two rows that
// differ; a rollout's targets, listed by name, add the id to a name that
// several of them share, and only then.
func TestNamesCollide_IDsTellThemApart(t *testing.T) {
	c, id := inventory(t)
	c.srv.UpdateAgent("e02", func(a *agent.Agent) { a.Attributes["host.name"] = "edge-gw-01" })
	c.run(clienttest.ViewerToken, "agents", "list", "--fleet", "edge").ok(t).has(t,
		"edge-gw-01  e01  edge", "edge-gw-01  e02  edge", "edge-gw-03  e03  edge")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).has(t,
		"AGENT             WAVE  STATUS",
		"edge-gw-01 (e01)  0     in_progress",
		"edge-gw-01 (e02)  1     pending",
		"edge-gw-03        1     pending")
}
