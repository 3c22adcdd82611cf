package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/client/clienttest"
)

// t0 is when the tests' server starts; the local clock of myrctl is set
// per test.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// cli runs myrctl against the real API handler (clienttest) with a fake
// local clock; watch's waits between refreshes call onSleep, which moves
// the world on (nil: the first wait ends the watch as Ctrl-C does).
type cli struct {
	t        *testing.T
	srv      *clienttest.Server
	now      time.Time
	terminal bool
	onSleep  func(n int)
	sleeps   int
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, srv: clienttest.Start(t, t0), now: t0}
}

// result is what one run of myrctl printed and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

// run executes myrctl with the token against the server.
func (c *cli) run(token string, args ...string) result {
	c.t.Helper()
	var out, errOut bytes.Buffer
	g := newGlobals(&out, &errOut)
	g.now = func() time.Time { return c.now }
	g.terminal = c.terminal
	g.sleep = func(ctx context.Context, _ time.Duration) error {
		c.sleeps++
		if c.onSleep == nil {
			return context.Canceled
		}
		c.onSleep(c.sleeps)
		return ctx.Err()
	}
	all := append([]string{"--api", c.srv.URL, "--token", token}, args...)
	code := runContext(context.Background(), g, all)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// ok fails unless the run exited 0.
func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r
}

// has fails unless stdout holds every text, in this order.
func (r result) has(t *testing.T, texts ...string) {
	t.Helper()
	rest := r.stdout
	for _, s := range texts {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("stdout lacks %q (in order)\nstdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
		}
		rest = rest[i+len(s):]
	}
}

// refused fails unless the run exited 1 with the problem line on stderr.
func (r result) refused(t *testing.T, line string) {
	t.Helper()
	if r.code != 1 || !strings.HasPrefix(r.stderr, "myrctl: "+line) {
		t.Fatalf("exit %d stderr %q, want 1 and %q", r.code, r.stderr, "myrctl: "+line)
	}
}

// usage fails unless the run exited 2.
func (r result) usage(t *testing.T, stderrHas string) {
	t.Helper()
	if r.code != 2 || !strings.Contains(r.stderr, stderrHas) {
		t.Fatalf("exit %d stderr %q, want 2 naming %q", r.code, r.stderr, stderrHas)
	}
}

// decodeOut decodes stdout as JSON.
func decodeOut[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not the JSON expected: %v\n%s", err, r.stdout)
	}
	return v
}

// sameAsAPI fails unless stdout is the JSON the API answers at path.
func (c *cli) sameAsAPI(r result, path string) {
	c.t.Helper()
	var raw json.RawMessage
	if err := c.srv.Client(clienttest.AdminToken).Do(c.t.Context(), "GET", path, nil, nil, &raw); err != nil {
		c.t.Fatal(err)
	}
	var want, got any
	_ = json.Unmarshal(raw, &want)
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || !reflect.DeepEqual(want, got) {
		c.t.Fatalf("stdout is not the API's JSON of %s (%v)\nAPI:    %s\nmyrctl: %s", path, err, raw, r.stdout)
	}
}

// writeDir writes a revision directory and returns its path.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// waitingApproval applies the edge revision with n agents and drives the
// canary through its health wait: the rollout waits for the approval of
// wave 1. It returns the rollout's id.
func (c *cli) waitingApproval(n int) string {
	c.t.Helper()
	id := c.srv.ApplyEdge(c.t, n, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.srv.Advance(5 * time.Minute)
	c.srv.Evaluate(id)
	if s := c.srv.Rollout(id).Status; s != "waiting_approval" {
		c.t.Fatalf("rollout is %s, want waiting_approval", s)
	}
	return id
}
