package main

import (
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestAudit(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	op := c.srv.Client(clienttest.OperatorToken)
	for _, v := range []string{"0.162.0", "0.170.0"} { // a choice, then a refused one
		_, _ = op.SelectVersion(t.Context(), "edge", client.SelectRequest{Version: v, Reason: "test"})
	}
	c.run(clienttest.ViewerToken, "audit", "--target-type", "fleet", "--target-id", "edge").ok(t).has(t,
		"AT                    ACTOR          ACTION                RESULT   DETAILS",
		"2026-11-30T09:00:00Z  Dana Operator  fleet.version.select  failure  code=selection_rejected",
		"2026-11-30T09:00:00Z  Dana Operator  fleet.version.select  success  gitCommit=9f3c2a17 gitVersion=0.161.0 noop=false")
	page := decodeOut[client.Page[client.AuditEntry]](t, c.run(clienttest.ViewerToken, "audit", "--target-type", "fleet", "--target-id", "edge", "--limit", "1", "-o", "json").ok(t))
	if len(page.Items) != 1 || page.Items[0].Result != "failure" {
		t.Fatalf("--limit 1 gave %+v, want the newest entry", page.Items)
	}
	c.run(clienttest.ViewerToken, "audit", "--target-type", "fleet", "--target-id", "core").ok(t).has(t, "no audit entries")
	c.run(clienttest.ViewerToken, "audit", "--target-type", "fleet").usage(t, `required flag(s) "target-id" not set`)
}

func TestMe(t *testing.T) {
	c := newCLI(t)
	cases := []struct{ token, want string }{
		{token: clienttest.ViewerToken, want: "Vera Viewer (user:11111111-1111-4111-8111-111111111111), role viewer: read\n"},
		{token: clienttest.OperatorToken, want: "Dana Operator (user:22222222-2222-4222-8222-222222222222), role operator: read, rollouts:operate, fleets:set_version, agents:reset_credential\n"},
		{token: clienttest.AdminToken, want: "CI pipeline (token:33333333-3333-4333-8333-333333333333), role admin: read, rollouts:operate, fleets:set_version, agents:reset_credential, revisions:apply, releases:manage\n"},
	}
	for _, tc := range cases {
		if r := c.run(tc.token, "me").ok(t); r.stdout != tc.want {
			t.Errorf("me: %q, want %q", r.stdout, tc.want)
		}
	}
	c.sameAsAPI(c.run(clienttest.AdminToken, "me", "-o", "json").ok(t), "/api/v1/me")
	c.run("", "me").refused(t, "401 unauthenticated: ")
}
