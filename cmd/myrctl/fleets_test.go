package main

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestFleets_Read(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.run(clienttest.ViewerToken, "fleets", "list").ok(t).has(t,
		"NAME  EXECUTOR  TARGET VERSION  AGENTS ONLINE  ON TARGET VERSION  ON CONFIG  ACTIVE ROLLOUTS",
		"edge  updater   0.161.0 (git)   3/3            3                  0          "+id+" config pending")
	c.run(clienttest.ViewerToken, "fleets", "get", "edge").ok(t).has(t,
		"Fleet            edge (revision 9f3c2a17)", "Target version   0.161.0 (git)", "Version choice   enabled >=0.161.0, <=0.162.0",
		"Executor         updater", "Policies         config canary-then-all, version default", "Agents           3, 3 online",
		"Active rollouts  "+id+" config pending")
	c.run(clienttest.ViewerToken, "fleets", "version-options", "edge").ok(t).has(t,
		"target 0.161.0 (git) · executor updater · policy default · choice allowed: yes",
		"VERSION  SELECTABLE  NOTE", "0.162.0  yes\n", "0.161.0  no          Git target, current_target", "platforms: linux/amd64, linux/arm64")
	for args, path := range map[string]string{"list": "/api/v1/fleets", "get edge": "/api/v1/fleets/edge", "version-options edge": "/api/v1/fleets/edge/version-options"} {
		c.sameAsAPI(c.run(clienttest.ViewerToken, append(append([]string{"fleets"}, strings.Fields(args)...), "-o", "json")...).ok(t), path)
	}
	c.run(clienttest.ViewerToken, "fleets", "get", "core").refused(t, "404 fleet_not_found: fleet core does not exist")
	c.run(clienttest.ViewerToken, "fleets", "version-options", "core").refused(t, "404 fleet_not_found")
	c.run(clienttest.ViewerToken, "fleets", "get").usage(t, "accepts 1 arg(s)")
}

func TestFleets_NoneYet(t *testing.T) {
	c := newCLI(t)
	c.run(clienttest.ViewerToken, "fleets", "list").ok(t).has(t, "no fleets")
}

func TestFleets_SelectAndClear(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.run(clienttest.ViewerToken, "fleets", "select-version", "edge", "0.162.0").
		refused(t, "403 forbidden: the role viewer lacks the permission fleets:set_version")
	c.run(clienttest.OperatorToken, "fleets", "select-version", "edge", "0.162.0", "--expected-target", "0.160.0").
		refused(t, "409 target_changed: ")
	c.run(clienttest.OperatorToken, "fleets", "select-version", "edge", "0.162.0", "--expected-target", "").
		refused(t, "409 target_changed: ") // "" means no target, and there is one
	rej := c.run(clienttest.OperatorToken, "fleets", "select-version", "edge", "0.170.0")
	rej.refused(t, "422 selection_rejected: ")
	if !strings.Contains(rej.stderr, "\n  error version_not_allowed") {
		t.Errorf("the issue is not listed:\n%s", rej.stderr)
	}
	r := c.run(clienttest.OperatorToken, "fleets", "select-version", "edge", "0.162.0", "--reason", "CVE-2026-1234", "--expected-target", "0.161.0").ok(t)
	r.has(t, "version 0.162.0 selected for fleet edge", "target 0.162.0 (ui)", "rollout r-", "with 3 targets; watch it with: myrctl watch r-")
	noop := decodeOut[client.SelectResult](t, c.run(clienttest.OperatorToken, "fleets", "select-version", "edge", "0.162.0", "-o", "json").ok(t))
	if noop.Target.Version != "0.162.0" || noop.RolloutID != "" || !strings.Contains(noop.Message, "nothing changed") {
		t.Errorf("a second choice of the same version: %+v", noop)
	}
	c.run(clienttest.OperatorToken, "fleets", "get", "edge").ok(t).has(t, "Selection        0.162.0 (active) by Dana Operator at 2026-11-30T09:00:00Z: CVE-2026-1234")
	cl := decodeOut[client.ClearResult](t, c.run(clienttest.OperatorToken, "fleets", "clear-version-selection", "edge", "--reason", "back", "-o", "json").ok(t))
	if cl.Version != "0.161.0" || cl.Source != "git" {
		t.Fatalf("after clear: %+v", cl)
	}
	c.run(clienttest.OperatorToken, "fleets", "clear-version-selection", "edge").ok(t).has(t, "target 0.161.0 (git)")
	c.run(clienttest.OperatorToken, "fleets", "clear-version-selection", "core").refused(t, "404 fleet_not_found")
	c.run(clienttest.OperatorToken, "fleets", "select-version", "edge").usage(t, "accepts 2 arg(s)")
}
