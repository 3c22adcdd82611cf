package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/pkg/client/clienttest"
)

// TestExitStatus_Usage: every API command refuses a bad --output, and
// unknown commands are usage errors, before anything is sent.
func TestExitStatus_Usage(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"me"}, {"rollouts", "list"}, {"rollouts", "get", "r"}, {"rollouts", "targets", "r"}, {"rollouts", "pause", "r"},
		{"rollouts", "approve", "r", "--wave", "0"}, {"fleets", "list"}, {"fleets", "get", "f"}, {"fleets", "version-options", "f"},
		{"fleets", "select-version", "f", "1.0.0"}, {"fleets", "clear-version-selection", "f"},
		{"audit", "--target-type", "fleet", "--target-id", "f"}, {"watch", "r"}, {"apply", "testdata/broken"},
	} {
		c.run(clienttest.AdminToken, append(args, "-o", "yaml")...).usage(t, `--output must be text or json, not "yaml"`)
	}
	c.run(clienttest.AdminToken, "rollout", "list").usage(t, `unknown command "rollout"`)
	c.run(clienttest.AdminToken, "fleets", "delete", "edge").usage(t, `unknown command "delete" for "myrctl fleets"`)
	c.run(clienttest.AdminToken, "me", "--nope").usage(t, "unknown flag: --nope")
	if r := c.run(clienttest.AdminToken, "rollouts"); r.code != 0 || !strings.Contains(r.stdout, "Available Commands") {
		t.Errorf("a group alone: exit %d, want 0 with its help", r.code)
	}
}

// TestExitStatus_Unreachable: an API that cannot be reached fails with 1.
func TestExitStatus_Unreachable(t *testing.T) {
	c := newCLI(t)
	gone := httptest.NewServer(nil)
	gone.Close()
	c.srv.URL = gone.URL
	r := c.run(clienttest.ViewerToken, "me")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "myrctl: GET /api/v1/me: ") {
		t.Fatalf("exit %d stderr %q, want 1 naming the request", r.code, r.stderr)
	}
}

// TestValidate_Unchanged: validate stays offline and keeps its statuses.
func TestValidate_Unchanged(t *testing.T) {
	c := newCLI(t)
	c.srv.URL = "http://127.0.0.1:1" // nothing listens: validate must not call
	if r := c.run("", "validate", "../../examples/quickstart"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := c.run("", "validate", "testdata/broken"); r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
}
