package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
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

// TestExitStatus_Unreachable: an API that cannot be reached fails with 1
// and says which URL was tried and how to change it.
func TestExitStatus_Unreachable(t *testing.T) {
	c := newCLI(t)
	gone := httptest.NewServer(nil)
	gone.Close()
	c.srv.URL = gone.URL + "/api/v1"
	r := c.run(clienttest.ViewerToken, "me")
	want := "myrctl: cannot reach the API at " + gone.URL + " (connection refused): start it with make run, or set --api / MYRIARCH_API\n"
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q, want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestReachHint: make run is the hint for this machine's API only.
func TestReachHint(t *testing.T) {
	for base, want := range map[string]string{
		"http://127.0.0.1:8080":                                "start it with make run, or set --api / MYRIARCH_API",
		"http://localhost:18080":                               "start it with make run, or set --api / MYRIARCH_API",
		"http://[::1]:8080":                                    "start it with make run, or set --api / MYRIARCH_API",
		"https://abc.execute-api.eu-west-1.amazonaws.com/prod": "check the URL and the network, or set --api / MYRIARCH_API",
	} {
		if got := reachHint(base); got != want {
			t.Errorf("reachHint(%s) = %q, want %q", base, got, want)
		}
	}
}

// TestAPIURL_WithOrWithoutAPIPrefix: the URL the local stack prints
// (http://127.0.0.1:8080/api/v1) works as well as the bare base URL; one
// that no request could use is a usage error; one with a path the API does
// not have says to check --api.
func TestAPIURL_WithOrWithoutAPIPrefix(t *testing.T) {
	c := newCLI(t)
	base := c.srv.URL
	for _, api := range []string{base, base + "/", base + "/api/v1", base + "/api/v1/"} {
		c.srv.URL = api
		c.run(clienttest.ViewerToken, "me").ok(t).has(t, "Vera Viewer")
		c.run(clienttest.ViewerToken, "rollouts", "list").ok(t).has(t, "no rollouts")
	}
	for _, api := range []string{"127.0.0.1:8080", "localhost:8080", "ftp://127.0.0.1", "http://", "http://127.0.0.1:8080?x=1"} {
		c.srv.URL = api
		c.run(clienttest.ViewerToken, "me").usage(t, "--api / MYRIARCH_API must be the API's http or https URL")
	}
	c.srv.URL = base + "/v1"
	r := c.run(clienttest.ViewerToken, "me")
	if r.code != 1 || !strings.Contains(r.stderr, "myrctl: 404 not_found: ") || !strings.Contains(r.stderr, "  is "+base+"/v1 the API's base URL? set --api / MYRIARCH_API\n") {
		t.Fatalf("exit %d stderr %q, want 1 with the hint to check --api", r.code, r.stderr)
	}
	// API Gateway answers a path without a route with a 403.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"Missing Authentication Token"}`))
	}))
	defer gw.Close()
	c.srv.URL = gw.URL
	r = c.run(clienttest.ViewerToken, "me")
	if r.code != 1 || r.stderr != "myrctl: 403 forbidden: Missing Authentication Token\n  is "+gw.URL+" the API's base URL? set --api / MYRIARCH_API\n" {
		t.Fatalf("exit %d stderr %q, want 1 with the hint to check --api", r.code, r.stderr)
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
		{api: c.srv.URL, args: []string{"--help"}},
		{api: c.srv.URL, args: []string{"rollouts", "--help"}},
		{api: c.srv.URL, args: []string{"rollouts", "approve", "--help"}},
		{api: c.srv.URL, args: []string{"help", "watch"}},
		{api: c.srv.URL, args: []string{"me", "--nope"}},                                              // usage error
		{api: c.srv.URL, args: []string{"rollouts", "approve", "r-1"}},                                // a required flag missing
		{api: c.srv.URL, args: []string{"frobnicate"}},                                                // unknown command
		{api: c.srv.URL, args: []string{"me"}},                                                        // 401: the server does not know the token
		{api: c.srv.URL, args: []string{"me", "-o", "json"}},                                          // the problem on stdout
		{api: c.srv.URL, args: []string{"me", "--token", sentinel + "-flag"}},                         // given as a flag
		{api: c.srv.URL, args: []string{"rollouts", "get", "r-1", "--token", clienttest.ViewerToken}}, // 404
		{api: gone.URL, args: []string{"me"}},                                                         // unreachable
		{api: gone.URL, args: []string{"watch", "r-1"}},                                               // unreachable, watch
		{api: "127.0.0.1:1", args: []string{"me"}},                                                    // a bad --api
		{api: echo.URL, args: []string{"me"}},                                                         // an answer that echoes it
		{api: echo.URL, args: []string{"me", "-o", "json"}},
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

// TestUnauthenticated_NamesTheToken: a 401 without a token tells a user of
// myrctl how to give one (MYRIARCH_TOKEN, --token) instead of the API's
// header; with a token the API does not know, that this API does not know
// it. Both exit 1; -o json still prints the API's problem.
func TestUnauthenticated_NamesTheToken(t *testing.T) {
	t.Setenv("MYRIARCH_TOKEN", "")
	c := newCLI(t) // on 127.0.0.1: the local stack's hint
	r := c.run("", "rollouts", "list")
	want := "myrctl: 401 unauthenticated: myrctl sent no token: set MYRIARCH_TOKEN or pass --token (make run prints the local stack's tokens)\n"
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Fatalf("no token: exit %d stdout %q stderr %q, want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = c.run("not-a-known-token", "me")
	want = "myrctl: 401 unauthenticated: the token is not known\n  " + c.srv.URL + " does not know the token of --token / MYRIARCH_TOKEN: check it (make run prints the local stack's tokens)\n"
	if r.code != 1 || r.stderr != want {
		t.Fatalf("unknown token: exit %d stderr %q, want 1 and %q", r.code, r.stderr, want)
	}
	if p := decodeOut[client.Problem](t, c.run("", "me", "-o", "json")); p.Status != 401 || p.Code != "unauthenticated" {
		t.Fatalf("-o json: problem %+v, want the API's 401", p)
	}
	// API Gateway's authorizer answers {"message": "Unauthorized"}.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Unauthorized"}`))
	}))
	defer gw.Close()
	c.srv.URL = gw.URL
	r = c.run("", "me")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "myrctl: 401 unauthorized: myrctl sent no token: set MYRIARCH_TOKEN or pass --token") {
		t.Fatalf("API Gateway's 401: exit %d stderr %q", r.code, r.stderr)
	}
}
