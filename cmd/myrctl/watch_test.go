package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// frames splits watch's text output into its frames (each ends with the
// "updated" line).
func frames(out string) []string {
	parts := strings.SplitAfter(out, "Ctrl-C to stop\n")
	return parts[:len(parts)-1]
}

// TestWatch_ConfigRolloutToCompletion follows a rollout from the canary's
// health wait to completed on a fake local clock: the remaining wait, then
// "finishing…" while the engine has not evaluated it yet, the approval,
// the second wave, and exit status 0.
func TestWatch_ConfigRolloutToCompletion(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id) // e01 verifying since t0; healthWait 5m
	c.now = t0.Add(48 * time.Second)
	c.onSleep = func(n int) {
		switch n {
		case 1: // the local clock reaches the end of the wait before the engine evaluates
			c.now = t0.Add(5 * time.Minute)
		case 2: // the engine ends the canary; an operator approves; the rest verify
			c.srv.Advance(5 * time.Minute)
			c.srv.Evaluate(id)
			if _, err := c.srv.Client(clienttest.OperatorToken).Approve(t.Context(), id, 1); err != nil {
				t.Fatal(err)
			}
			c.srv.Evaluate(id)
			c.srv.ApplyConfig("e02", "e03")
			c.srv.Evaluate(id)
			c.now = t0.Add(5*time.Minute + 10*time.Second)
		case 3:
			c.srv.Advance(5 * time.Minute)
			c.srv.Evaluate(id)
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id, "--interval", "5s").ok(t)
	fs := frames(r.stdout)
	if len(fs) != 4 {
		t.Fatalf("%d frames, want 4:\n%s", len(fs), r.stdout)
	}
	want := [][]string{
		{"Rollout " + id + " · fleet edge · config · running", "Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17",
			"0 canary  running  [--------------------] 0/1  verifying 1 · 1 in health wait, the last ends in 4m12s",
			"Verifying (health wait) (1)", "e01  wave 0  4m12s left", "Pending (2)", "updated 2026-11-30T09:00:48Z · every 5s"},
		{"1 in health wait, finishing…", "e01  wave 0  finishing…"},
		{"0 canary  completed  [####################] 1/1  succeeded 1", "1 rest    running    [--------------------] 0/2  verifying 2",
			"Verifying (health wait) (2)", "e02  wave 1  4m50s left", "e03  wave 1  4m50s left", "Succeeded (1)", "e01  wave 0"},
		{"config · completed", "1 rest    completed  [####################] 2/2  succeeded 2", "Succeeded (3)"},
	}
	for i, texts := range want {
		(result{stdout: fs[i]}).has(t, texts...)
	}
	if !strings.HasSuffix(r.stdout, "rollout "+id+" completed\n") {
		t.Errorf("no closing line:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, clearScreen) {
		t.Error("frames to a file must not clear the screen")
	}
}

// TestWatch_ShowsTheApprovalAndPause: the waiting wave says how to approve
// it; a paused rollout shows its reason and is watched on.
func TestWatch_ShowsTheApprovalAndPause(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	c.onSleep = func(n int) {
		if n == 1 {
			if _, err := c.srv.Client(clienttest.OperatorToken).Act(t.Context(), id, "pause"); err != nil {
				t.Fatal(err)
			}
		}
		if n == 2 {
			c.onSleep = nil // the next wait is a Ctrl-C
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id)
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d", r.code, exitInterrupted)
	}
	fs := frames(r.stdout)
	(result{stdout: fs[0]}).has(t, "config · waiting_approval", "1 rest    waiting_approval", "wave 1 waits for approval: myrctl rollouts approve "+id+" --wave 1")
	(result{stdout: fs[1]}).has(t, "config · paused", "paused by Dana Operator", "myrctl rollouts resume|retry-failed|abort|rollback "+id)
	if len(fs) != 3 {
		t.Fatalf("%d frames, want 3: paused is watched on", len(fs))
	}
}

func TestWatch_ExitStatus(t *testing.T) {
	cases := []struct {
		status rollout.Status
		final  bool
		code   int
	}{
		{status: rollout.Completed, final: true, code: 0},        // success
		{status: rollout.Aborted, final: true, code: 1},          // an operator stopped it
		{status: rollout.RolledBack, final: true, code: 1},       // the change was taken back
		{status: rollout.Superseded, final: true, code: 1},       // another rollout carries the change on
		{status: rollout.Failed, final: true, code: 1},           // not final, but only a person moves it on
		{status: rollout.Paused, final: false, code: 0},          // resume may follow
		{status: rollout.WaitingApproval, final: false, code: 0}, // approve may follow
		{status: rollout.RollingBack, final: false, code: 0},     // ends by itself
		{status: rollout.Running, final: false, code: 0},         // still working
		{status: rollout.Pending, final: false, code: 0},         // not yet started
	}
	for _, c := range cases {
		if final, code := ended(c.status); final != c.final || code != c.code {
			t.Errorf("%s: ended %v with %d, want %v with %d", c.status, final, code, c.final, c.code)
		}
	}
}

func TestWatch_EndsWhenAborted(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	c.onSleep = func(int) {
		if _, err := c.srv.Client(clienttest.OperatorToken).Act(t.Context(), id, "abort"); err != nil {
			t.Fatal(err)
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id)
	if r.code != 1 || !strings.Contains(r.stdout, "rollout "+id+" aborted") || len(frames(r.stdout)) != 2 {
		t.Fatalf("exit %d, want 1 after two frames and the closing line:\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "Cancelled (2)") {
		t.Errorf("the cancelled targets are not shown:\n%s", r.stdout)
	}
}

func TestWatch_Refusals(t *testing.T) {
	c := newCLI(t)
	c.run(clienttest.ViewerToken, "watch", "r-nope").refused(t, "404 rollout_not_found: rollout r-nope does not exist")
	c.run("wrong", "watch", "r-nope").refused(t, "401 unauthenticated")
	c.run(clienttest.ViewerToken, "watch").usage(t, "accepts 1 arg(s)")
	c.run(clienttest.ViewerToken, "watch", "r-1", "--interval", "0s").usage(t, "--interval")
	c.run(clienttest.ViewerToken, "watch", "r-1", "--per-group", "0").usage(t, "--per-group")
}

// TestWatch_RefreshFailures: after the first frame, an API that cannot
// answer (a 502 of a proxy) is reported and retried; a refusal ends.
func TestWatch_RefreshFailures(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(2)
	target, _ := url.Parse(c.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mode atomic.Int32 // 0 forward, 1 bad gateway, 2 not found
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 1:
			http.Error(w, "upstream down", http.StatusBadGateway)
		case 2:
			r.URL.Path = "/api/v1/rollouts/r-gone"
			proxy.ServeHTTP(w, r)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer front.Close()
	c.srv.URL = front.URL
	c.onSleep = func(n int) { mode.Store(int32(n)) }
	r := c.run(clienttest.ViewerToken, "watch", id)
	if r.code != 1 || len(frames(r.stdout)) != 1 {
		t.Fatalf("exit %d, want 1 after one frame:\n%s", r.code, r.stdout)
	}
	r.has(t, "refresh failed, trying again in 2s: 502 bad_gateway: upstream down")
	if !strings.HasPrefix(r.stderr, "myrctl: 404 rollout_not_found") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestWatch_JSONLines(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.now = t0.Add(time.Minute)
	c.onSleep = func(n int) {
		c.now = c.now.Add(5 * time.Minute)
		if n == 2 {
			if _, err := c.srv.Client(clienttest.OperatorToken).Act(t.Context(), id, "abort"); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id, "-o", "json")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 1 || len(lines) != 3 {
		t.Fatalf("exit %d with %d lines, want 1 with 3:\n%s", r.code, len(lines), r.stdout)
	}
	var recs []watchRecord
	for _, l := range lines {
		var rec watchRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Rollout == nil || len(rec.Targets) != 2 {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, rec)
	}
	if hw := recs[0].HealthWaits; len(hw) != 1 || hw[0].AgentID != "e01" || hw[0].RemainingSeconds != 240 || !hw[0].EndsAt.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("first record's health waits %+v, want e01 with 240 s left", hw)
	}
	if hw := recs[1].HealthWaits; len(hw) != 1 || hw[0].RemainingSeconds != 0 {
		t.Errorf("second record's health waits %+v, want e01 finishing (0)", hw)
	}
	if recs[2].Rollout.Status != rollout.Aborted || len(recs[2].HealthWaits) != 0 || !recs[2].At.Equal(t0.Add(11*time.Minute)) {
		t.Errorf("last record: %s, waits %+v at %s", recs[2].Rollout.Status, recs[2].HealthWaits, recs[2].At)
	}
}

func TestWatch_TerminalRedrawsInPlace(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(2)
	c.terminal = true
	c.onSleep = func(n int) {
		if n == 1 {
			c.onSleep = nil
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id)
	if got := strings.Count(r.stdout, clearScreen); got != 2 || !strings.HasPrefix(r.stdout, clearScreen) {
		t.Fatalf("%d clears, want one before each of the 2 frames", got)
	}
}

// TestWatch_VersionRollout shows the update phase of version targets and
// the built-in policy's source line, counting its 60 s health wait.
func TestWatch_VersionRollout(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	sel, err := c.srv.Client(clienttest.OperatorToken).SelectVersion(t.Context(), "edge", client.SelectRequest{Version: "0.162.0", Reason: "CVE"})
	if err != nil || sel.RolloutID == "" {
		t.Fatalf("select: %+v, %v", sel, err)
	}
	id := sel.RolloutID
	c.srv.Evaluate(id)
	c.onSleep = func(n int) {
		switch n {
		case 1: // the collectors restart on the new version and report healthy
			c.srv.Advance(20 * time.Second)
			for _, a := range []string{"e01", "e02"} {
				c.srv.UpdateAgent(a, func(ag *agent.Agent) {
					ag.ServiceVersion = "0.162.0"
					ag.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: c.srv.Now()}
				})
			}
			c.srv.Evaluate(id)
			c.now = c.srv.Now().Add(15 * time.Second)
		case 2:
			c.srv.Advance(time.Minute)
			c.srv.Evaluate(id)
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id).ok(t)
	fs := frames(r.stdout)
	if len(fs) != 3 {
		t.Fatalf("%d frames, want 3:\n%s", len(fs), r.stdout)
	}
	(result{stdout: fs[0]}).has(t, "fleet edge · version · running", "origin ui · created by Dana Operator", "to 0.162.0 · executor updater",
		"reason: CVE", "Policy default · healthWait 1m · built-in policy", "In progress (2)", "e01  wave 0  offered")
	(result{stdout: fs[1]}).has(t, "Verifying (health wait) (2)", "e01  wave 0  health_wait · 45s left")
	(result{stdout: fs[2]}).has(t, "version · completed", "Succeeded (2)", "e01  wave 0  succeeded")
}

func TestWatch_SaysHowItEnded(t *testing.T) {
	cases := []struct {
		r    client.Rollout
		want string
	}{
		{r: client.Rollout{ID: "r-1", Status: rollout.Completed}, want: "rollout r-1 completed\n"},                                                  // the plain end
		{r: client.Rollout{ID: "r-1", Status: rollout.RolledBack, StatusReason: "wave 0 failed"}, want: "rollout r-1 rolled_back: wave 0 failed\n"}, // with the reason
		{r: client.Rollout{ID: "r-1", Status: rollout.Failed, StatusReason: "the fleet was removed"},
			want: "rollout r-1 failed: the fleet was removed\nit waits for a person: myrctl rollouts rollback|abort|retry-failed r-1\n"}, // what to do
	}
	for _, c := range cases {
		var out strings.Builder
		w := watcher{g: newGlobals(&out, &out)}
		w.g.output = "text"
		w.sayEnd(c.r)
		if out.String() != c.want {
			t.Errorf("%s: %q, want %q", c.r.Status, out.String(), c.want)
		}
	}
}

// TestWatch_JSONErrorLines: a refresh that failed is a line of its own.
func TestWatch_JSONErrorLines(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(2)
	target, _ := url.Parse(c.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var down atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "upstream down", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	c.srv.URL = front.URL
	c.onSleep = func(n int) {
		down.Store(n == 1)
		if n == 2 {
			c.onSleep = nil
		}
	}
	r := c.run(clienttest.ViewerToken, "watch", id, "-o", "json")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != exitInterrupted || len(lines) != 3 {
		t.Fatalf("exit %d with %d lines:\n%s", r.code, len(lines), r.stdout)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || len(e) != 2 || e["error"] != "502 bad_gateway: upstream down" {
		t.Fatalf("error line %s: %v", lines[1], err)
	}
	if !strings.Contains(lines[2], `"healthWaits":[]`) {
		t.Errorf("a record without health waits must still list them (empty): %s", lines[2])
	}
}

// TestWatch_Until: --until ends the watch with 0 at a status that is not
// final; an unknown status is a usage error.
func TestWatch_Until(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	r := c.run(clienttest.ViewerToken, "watch", id, "--until", "paused,waiting_approval").ok(t)
	if fs := frames(r.stdout); len(fs) != 1 || !strings.Contains(r.stdout, "\nrollout "+id+" waiting_approval: wave 1 \"rest\" waits for approval\n") {
		t.Fatalf("want one frame and the closing line:\n%s", r.stdout)
	}
	c.run(clienttest.ViewerToken, "watch", id, "--until", "approved").usage(t, `--until "approved" is not one of`)
}
