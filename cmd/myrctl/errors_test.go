package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// TestToken_NeverPrinted: with the token in MYRIARCH_TOKEN (or --token),
// neither the help nor a usage error nor a refusal nor an unreachable API
// prints it, on stdout or stderr.
func TestToken_NeverPrinted(t *testing.T) {
	const sentinel = "SENTINEL-0c5e1d2b-token-that-must-not-leak"
	c := newCLI(t)
	t.Setenv("MYRIARCH_TOKEN", sentinel)
	gone := httptest.NewServer(nil)
	gone.Close()
	// A server that echoes the Authorization header in its answer: myrctl
	// still does not print it.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied for "+r.Header.Get("Authorization"), http.StatusBadGateway)
	}))
	defer echo.Close()
	runs := []struct {
		api  string
		args []string
	}{
		{c.srv.URL, []string{"--help"}},
		{c.srv.URL, []string{"rollouts", "--help"}},
		{c.srv.URL, []string{"rollouts", "approve", "--help"}},
		{c.srv.URL, []string{"help", "watch"}},
		{c.srv.URL, []string{"me", "--nope"}},                                              // usage error
		{c.srv.URL, []string{"rollouts", "approve", "r-1"}},                                // a required flag missing
		{c.srv.URL, []string{"frobnicate"}},                                                // unknown command
		{c.srv.URL, []string{"me"}},                                                        // 401: the server does not know the token
		{c.srv.URL, []string{"me", "-o", "json"}},                                          // the problem on stdout
		{c.srv.URL, []string{"me", "--token", sentinel + "-flag"}},                         // given as a flag
		{c.srv.URL, []string{"rollouts", "get", "r-1", "--token", clienttest.ViewerToken}}, // 404
		{gone.URL, []string{"me"}},                                                         // unreachable
		{gone.URL, []string{"watch", "r-1"}},                                               // unreachable, watch
		{"127.0.0.1:1", []string{"me"}},                                                    // a bad --api
		{echo.URL, []string{"me"}},                                                         // an answer that echoes it
		{echo.URL, []string{"me", "-o", "json"}},
	}
	for _, run := range runs {
		var out, errOut bytes.Buffer
		g := newGlobals(&out, &errOut)
		g.sleep = func(context.Context, time.Duration) error { return context.Canceled }
		code := runContext(t.Context(), g, append([]string{"--api", run.api}, run.args...))
		for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
			if strings.Contains(text, "SENTINEL") {
				t.Errorf("myrctl %v (exit %d) prints the token on %s:\n%s", run.args, code, name, text)
			}
		}
		if run.args[0] == "--help" && !strings.Contains(out.String(), "bearer token (env MYRIARCH_TOKEN)") {
			t.Errorf("the help does not describe --token:\n%s", out.String())
		}
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
