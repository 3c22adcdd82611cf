package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// canaryDone is the edge rollout through its canary, waiting for the
// approval of its second wave: two events, started and waiting_approval.
func (c *cli) canaryDone() string {
	c.t.Helper()
	id := c.srv.ApplyEdge(c.t, 3, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.srv.Advance(5 * time.Minute)
	c.srv.Evaluate(id)
	return id
}

func TestEvents_OneLineEach(t *testing.T) {
	c := newCLI(t)
	id := c.canaryDone()
	r := c.run(clienttest.ViewerToken, "events").ok(t)
	want := "2026-11-30T09:00:00Z  rollout.started  " + id + " (edge, config)  running  wave canary · 0/3 succeeded\n" +
		"2026-11-30T09:05:00Z  rollout.waiting_approval  " + id + " (edge, config)  waiting_approval  wave rest · 1/3 succeeded  wave 1 \"rest\" requires approval\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
	c.run(clienttest.ViewerToken, "events", "--fleet", "core").ok(t).has(t, "no events")
	c.run(clienttest.ViewerToken, "events", "--since", "2026-11-30T09:01:00Z").ok(t).has(t, "rollout.waiting_approval")
	c.now = t0.Add(5 * time.Minute)
	if r := c.run(clienttest.ViewerToken, "events", "--since", "1m"); strings.Contains(r.stdout, "rollout.started") || r.code != 0 {
		t.Errorf("--since 1m (the local clock is 09:05): %d\n%s", r.code, r.stdout)
	}
	if r := c.run(clienttest.ViewerToken, "events", "--since", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, "--since") {
		t.Errorf("a bad --since: exit %d %s, want 2", r.code, r.stderr)
	}
	if r := c.run("nobody", "events"); r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Errorf("a bad token: exit %d %s, want 1 with the API's 401", r.code, r.stderr)
	}
}

// --follow prints the backlog, then each new event once, although every
// read within the API's settle window returns the recent events again.
func TestEvents_FollowPrintsEachEventOnce(t *testing.T) {
	c := newCLI(t)
	id := c.canaryDone()
	c.onSleep = func(n int) {
		switch n {
		case 1: // nothing new
		case 2:
			if _, err := c.srv.Client(clienttest.OperatorToken).Act(t.Context(), id, "pause"); err != nil {
				t.Fatal(err)
			}
		case 3:
			c.onSleep = nil // the next wait ends the run as Ctrl-C does
		}
	}
	r := c.run(clienttest.ViewerToken, "events", "--follow", "--rollout", id, "-o", "json")
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d (Ctrl-C)\n%s", r.code, exitInterrupted, r.stderr)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e client.RolloutEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		types = append(types, e.Type)
	}
	if strings.Join(types, " ") != "rollout.started rollout.waiting_approval rollout.paused" {
		t.Errorf("followed %v, want each event once", types)
	}
	// the same in time order, where the API answers the settle window again
	c.onSleep = func(n int) {
		if n == 5 {
			c.onSleep = nil
		}
	}
	r = c.run(clienttest.ViewerToken, "events", "-f")
	if n := strings.Count(r.stdout, "\n"); n != 3 || r.code != exitInterrupted {
		t.Errorf("followed by time: %d lines, exit %d:\n%s", n, r.code, r.stdout)
	}
}
