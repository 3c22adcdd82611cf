package main

import (
	"context"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// The server configures 0.160.0, 0.161.0, 0.162.0, 0.163.0-rc.1 and
// 0.170.0 on linux/amd64 and linux/arm64; the fleet edge is otelcol-contrib
// on 0.161.0 and may choose 0.161.0 to 0.162.0.

func TestReleases_ListPutDelete(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.run(clienttest.ViewerToken, "releases", "list", "otelcol-contrib").ok(t).has(t,
		"VERSION       SOURCE  NOTE        PUBLISHED  PLATFORMS",
		"0.170.0       config  latest      -          linux/amd64, linux/arm64",
		"0.163.0-rc.1  config  prerelease  -")
	c.run(clienttest.OperatorToken, "releases", "put", "otelcol-contrib", "0.171.0").
		refused(t, "403 forbidden: the role operator lacks the permission releases:manage")
	c.run(clienttest.AdminToken, "releases", "put", "otelcol-contrib", "0.171.0", "--published-at", "2026-11-30T10:00:00Z",
		"--platform", "linux/arm64", "--platform", "linux/amd64").ok(t).has(t,
		"otelcol-contrib 0.171.0 · source admin · latest · published 2026-11-30T10:00:00Z · by CI pipeline", "platforms: linux/amd64, linux/arm64")
	c.run(clienttest.AdminToken, "releases", "put", "otelcol-contrib", "0.171.0", "--published-at", "yesterday").usage(t, "RFC 3339")
	c.run(clienttest.AdminToken, "releases", "put", "otelcol-contrib", "v0.171.0").refused(t, "404 release_not_found: ")
	c.run(clienttest.ViewerToken, "releases", "get", "otelcol-contrib", "0.162.0").ok(t).has(t,
		"otelcol-contrib 0.162.0 · source config",
		"FLEET  TARGET VERSION  BEHIND  SELECTABLE  NOTE", "edge   0.161.0 (git)   yes     yes         -")
	c.run(clienttest.ViewerToken, "releases", "latest", "otelcol-contrib").ok(t).has(t,
		"otelcol-contrib 0.171.0 · source admin · latest", "edge   0.161.0 (git)   yes     no          outside_frame")
	c.run(clienttest.ViewerToken, "releases", "summary").ok(t).has(t,
		"DISTRIBUTION     LATEST   FLEETS BEHIND  COLLECTORS  ON LATEST  BEHIND  AHEAD  UNKNOWN  VERSIONS",
		"otelcol-contrib  0.171.0  1/1            3           0          3       0      0        0.161.0×3")
	for args, path := range map[string]string{
		"list otelcol-contrib": "/api/v1/releases?distribution=otelcol-contrib", "get otelcol-contrib 0.162.0": "/api/v1/releases/otelcol-contrib/0.162.0",
		"latest otelcol-contrib": "/api/v1/releases/otelcol-contrib/latest/fleets", "summary": "/api/v1/releases/summary",
	} {
		c.sameAsAPI(c.run(clienttest.ViewerToken, append(append([]string{"releases"}, strings.Fields(args)...), "-o", "json")...).ok(t), path)
	}
	c.run(clienttest.AdminToken, "releases", "delete", "otelcol-contrib", "0.171.0").ok(t).has(t, "release 0.171.0 of otelcol-contrib deleted")
	c.run(clienttest.AdminToken, "releases", "delete", "otelcol-contrib", "0.171.0").refused(t, "404 release_not_found: ")
	c.run(clienttest.AdminToken, "releases", "delete", "otelcol-contrib", "0.161.0").refused(t, "409 release_configured: ")
	c.run(clienttest.ViewerToken, "releases", "list").usage(t, "accepts 1 arg(s)")
	c.run(clienttest.ViewerToken, "releases", "lst").usage(t, `unknown command "lst"`)
}

func TestFleets_InstallPlan(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge").ok(t).has(t,
		"0.161.0\n", "otelcol-contrib · source git · install the effective target 0.161.0 of fleet edge (source git)")
	c.sameAsAPI(c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge", "-o", "json").ok(t), "/api/v1/fleets/edge/install-plan")

	// The members record another target: the planner has not handled Git's.
	record := func(v string) {
		if err := c.srv.Store.SetAgentTargetVersions(context.Background(), map[string]string{"e01": v, "e02": v, "e03": v}); err != nil {
			t.Fatal(err)
		}
	}
	record("0.150.0")
	r := c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge")
	if r.code != exitNotReady || !strings.HasPrefix(r.stdout, "not ready (target_not_planned): ") || !strings.Contains(r.stdout, "ask again in 60s") {
		t.Errorf("exit %d stdout %q, want 3 and the reason", r.code, r.stdout)
	}
	if p := decodeOut[client.InstallPlan](t, c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge", "-o", "json")); p.Ready || p.RetryAfterSeconds != 60 {
		t.Errorf("json %+v", p)
	}
	// --wait asks again after the pause the API suggests.
	c.onSleep = func(int) { record("0.161.0") }
	c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge", "--wait", "5m").ok(t).has(t, "0.161.0\n")
	if c.sleeps != 1 {
		t.Errorf("%d waits, want 1", c.sleeps)
	}
	// A wait shorter than the pause asks once.
	record("0.150.0")
	if r := c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge", "--wait", "30s"); r.code != exitNotReady || c.sleeps != 1 {
		t.Errorf("exit %d after %d waits", r.code, c.sleeps)
	}
	c.run(clienttest.ViewerToken, "fleets", "install-plan", "core").refused(t, "404 fleet_not_found: ")
	c.run(clienttest.ViewerToken, "fleets", "install-plan", "edge", "--wait", "-1s").usage(t, "--wait")
}
