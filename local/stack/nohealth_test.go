package stack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// TestAgentsWithoutHealthReports_RolloutsComplete: agents that do not declare
// ReportsHealth (like the opamp-go example agent) send no health at all. A
// configuration rollout and a version rollout over them complete within a
// few health waits, far inside applyTimeout (5 and 10 minutes), which is
// where their targets ended as startup_timeout before such agents were
// judged by their connection and reports alone.
func TestAgentsWithoutHealthReports_RolloutsComplete(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startTestStack(t, ctx, "nohealth-test-", nil)

	const n = 4
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = n, s.GatewayURL, s.AgentToken, 10
	cfg.NoHealthReports = true
	connectFleet(t, ctx, s, cfg)
	agents, err := s.Deps.Store.AllAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.ReportsHealth() {
			t.Fatalf("agent %s recorded with capabilities %#x: want them without ReportsHealth", a.ID, a.Capabilities)
		}
	}
	c := client{base: s.APIURL, token: s.AdminToken}
	id := quickstartChange(ctx, t, s, c, "nohealth")
	waitCompleted(ctx, t, c, id, n)

	selected := selectVersion(ctx, t, c, "0.162.0")
	waitCompleted(ctx, t, c, selected, n)
}

// quickstartChange applies examples/quickstart (health wait 3s, no
// approval) as commit <name>-1, then a changed configuration of fleet edge
// as <name>-2, and returns the configuration rollout the change created.
func quickstartChange(ctx context.Context, t *testing.T, s *Stack, c client, name string) string {
	t.Helper()
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "3s")
	files["policies/demo-config.yaml"] = []byte(strings.Replace(string(files["policies/demo-config.yaml"]), "requireApproval: true", "requireApproval: false", 1))
	if err := s.apply(ctx, c, files, name+"-1"); err != nil {
		t.Fatal(err)
	}
	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte("# "+name+"-2\n")...)
	id, err := s.applyForRollout(ctx, c, files, name+"-2")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitCompleted waits for the rollout to end and fails unless it completed
// with n targets succeeded.
func waitCompleted(ctx context.Context, t *testing.T, c client, id string, n int) {
	t.Helper()
	var r rolloutView
	defer func() {
		if t.Failed() {
			t.Logf("rollout %s as last seen: %s", id, r.line())
		}
	}()
	waitFor(ctx, t, "rollout "+id+" to end", func() bool {
		if err := c.do(ctx, "GET", "/api/v1/rollouts/"+id, nil, &r); err != nil {
			return false
		}
		switch r.Status {
		case "completed", "paused", "failed", "rolling_back", "rolled_back", "aborted", "superseded":
			return true
		}
		return false
	})
	if r.Status != "completed" || r.TargetCounts["succeeded"] != n {
		t.Fatalf("%s rollout %s is %s (%s), targets %v: want completed with %d succeeded", r.Kind, r.ID, r.Status, r.StatusReason, r.TargetCounts, n)
	}
}
