package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

func TestHealthWaits(t *testing.T) {
	fiveMin := client.PolicySnapshot{HealthWait: "5m0s", HealthWaitSeconds: 300}
	cases := []struct {
		name     string
		policy   client.PolicySnapshot
		status   rollout.Status
		verified *time.Time
		now      time.Duration // after t0
		want     string        // "" for no countdown
	}{
		{name: "counting", policy: fiveMin, status: rollout.Running, verified: at(0), now: 48 * time.Second, want: "4m12s left"},                      // verifiedAt + 5m - now
		{name: "rounded up", policy: fiveMin, status: rollout.Running, verified: at(0), now: 4*time.Minute + 59500*time.Millisecond, want: "1s left"}, // never 0 before the end
		{name: "at the end", policy: fiveMin, status: rollout.Running, verified: at(0), now: 5 * time.Minute, want: "finishing…"},                     // the engine has not evaluated yet
		{name: "past the end", policy: fiveMin, status: rollout.Running, verified: at(0), now: 7 * time.Minute, want: "finishing…"},                   // still finishing
		{name: "no value", policy: client.PolicySnapshot{}, status: rollout.Running, verified: at(0), now: 15 * time.Second, want: "45s left"},        // 60 s when the snapshot has none
		{name: "paused", policy: fiveMin, status: rollout.Paused, verified: at(0), now: time.Minute, want: "4m left"},                                 // the engine goes on while paused
		{name: "waiting approval", policy: fiveMin, status: rollout.WaitingApproval, verified: at(0), now: time.Minute, want: "4m left"},              // and while waiting for approval
		{name: "failed", policy: fiveMin, status: rollout.Failed, verified: at(0), now: time.Minute, want: ""},                                        // not evaluated: no time shown
		{name: "rolling back", policy: fiveMin, status: rollout.RollingBack, verified: at(0), now: time.Minute, want: ""},                             // not evaluated
		{name: "aborted", policy: fiveMin, status: rollout.Aborted, verified: at(0), now: time.Minute, want: ""},                                      // final
		{name: "no verifiedAt", policy: fiveMin, status: rollout.Running, verified: nil, now: time.Minute, want: ""},                                  // nothing to count from
	}
	for _, c := range cases {
		r := client.Rollout{Status: c.status, Policy: c.policy}
		ts := []client.Target{{AgentID: "a", Status: rollout.TargetVerifying, VerifiedAt: c.verified}}
		h, ok := healthWaits(r, ts, t0.Add(c.now))["a"]
		got := ""
		if ok {
			got = h.text()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// pageOf builds a rollout of one wave with n targets of each status.
func pageOf(n int, kind string) view {
	var ts []client.Target
	var counts client.TargetCounts
	for _, s := range targetStatuses {
		for i := 0; i < n; i++ {
			tg := client.Target{AgentID: fmt.Sprintf("%s-%03d", s, i), Status: s, Attempt: 1}
			if s == rollout.TargetVerifying {
				tg.VerifiedAt = at(0)
			}
			ts = append(ts, tg)
		}
	}
	total := len(ts)
	counts = client.TargetCounts{Pending: n, WaitingWindow: n, InProgress: n, Verifying: n, Succeeded: n, Failed: n, Skipped: n, Cancelled: n, RolledBack: n}
	r := client.Rollout{ID: "r-1", Fleet: "edge", Kind: "config", Status: rollout.Running, Policy: client.PolicySnapshot{HealthWait: "1m0s"},
		Waves: []client.Wave{{Index: 0, Name: "all", Status: rollout.WaveRunning, Total: &total, Counts: &counts}}}
	if kind != "" {
		r.Kind = "version"
	}
	return view{r: r, targets: ts, now: t0.Add(10 * time.Second), perGroup: 3}
}

// TestFrame_GroupsInThePageOrder: running work first, then waiting for a
// window, failed and rolled back, pending, succeeded, skipped, cancelled.
func TestFrame_GroupsInThePageOrder(t *testing.T) {
	var b strings.Builder
	pageOf(1, "").writeTargets(&b)
	(result{stdout: b.String()}).has(t, "Targets (9)", "In progress (1)", "Verifying (health wait) (1)", "Waiting for a maintenance window (1)",
		"Failed (1)", "Rolled back (1)", "Pending (1)", "Succeeded (1)", "Skipped (1)", "Cancelled (1)")
}

func TestFrame_AtMostPerGroup(t *testing.T) {
	var b strings.Builder
	pageOf(5, "").writeTargets(&b)
	out := b.String()
	(result{stdout: out}).has(t, "In progress (5)", "in_progress-000", "in_progress-002", "… and 2 more", "Verifying (health wait) (5)")
	if strings.Contains(out, "in_progress-003") {
		t.Errorf("more than 3 targets of a group shown:\n%s", out)
	}
}

// TestFrame_CompactForManyTargets: 1,000 targets still fit a screen.
func TestFrame_CompactForManyTargets(t *testing.T) {
	v := pageOf(112, "") // 1,008 targets
	v.perGroup = 2
	var b strings.Builder
	writeFrame(&b, v)
	if lines := strings.Count(b.String(), "\n"); lines > 50 {
		t.Fatalf("%d lines for 1,008 targets:\n%s", lines, b.String())
	}
	(result{stdout: b.String()}).has(t, "[#########xx---------] 560/1008", "Targets (1008)", "… and 110 more")
}

func TestFrame_WaveBar(t *testing.T) {
	cases := []struct {
		done, failed, total int
		want                string
	}{
		{done: 0, total: 0, want: "[--------------------]"},              // a wave without targets
		{done: 0, total: 48, want: "[--------------------]"},             // nothing done
		{done: 1, total: 2, want: "[##########----------]"},              // half
		{done: 47, total: 48, want: "[###################-]"},            // rounded down: full only when all are done
		{done: 48, total: 48, want: "[####################]"},            // done
		{done: 1, failed: 1, total: 1, want: "[xxxxxxxxxxxxxxxxxxxx]"},   // the one target failed: no "#" at all
		{done: 2, failed: 1, total: 4, want: "[#####xxxxx----------]"},   // one succeeded, one failed
		{done: 48, failed: 1, total: 48, want: "[###################x]"}, // one failure shows, however small its share
	}
	for _, c := range cases {
		if got := bar(c.done, c.failed, c.total); got != c.want {
			t.Errorf("bar(%d, %d, %d) = %s, want %s", c.done, c.failed, c.total, got, c.want)
		}
	}
}

func TestFrame_TargetDetail(t *testing.T) {
	version := pageOf(0, "version")
	config := pageOf(0, "")
	waits := map[string]healthWait{"v": {AgentID: "v", RemainingSeconds: 30}}
	dl := &progress.TargetProgress{Phase: progress.PhaseDownloading, DownloadPercent: 42}
	hw := &progress.TargetProgress{Phase: progress.PhaseHealthWait}
	cases := []struct {
		v    view
		t    client.Target
		want string
	}{
		{v: version, t: client.Target{AgentID: "d", Status: rollout.TargetInProgress, Progress: dl, StartedAt: at(0)}, want: "downloading 42% · for 10s"}, // the phase of a version target
		{v: version, t: client.Target{AgentID: "v", Status: rollout.TargetVerifying, Progress: hw}, want: "health_wait · 30s left"},                       // the phase and the wait
		{v: config, t: client.Target{AgentID: "v", Status: rollout.TargetVerifying, Progress: hw}, want: "30s left"},                                      // no phase for a configuration
		{v: config, t: client.Target{AgentID: "f", Status: rollout.TargetFailed, Reason: "the agent reported FAILED", ReasonCode: "config_failed", Attempt: 2},
			want: "the agent reported FAILED (config_failed) · attempt 2"}, // why it ended, and the retry
		{v: config, t: client.Target{AgentID: "p", Status: rollout.TargetPending, Attempt: 1}, want: ""}, // nothing to say
	}
	for _, c := range cases {
		if got := c.v.detail(c.t, waits); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.t.AgentID, c.t.Status, got, c.want)
		}
	}
}

// TestFrame_WaveCardHealthWait: the number in the wait and when the last
// one ends; only the count for a rollout the engine does not evaluate.
func TestFrame_WaveCardHealthWait(t *testing.T) {
	v := pageOf(0, "")
	total, counts := 3, client.TargetCounts{Verifying: 2, Succeeded: 1}
	v.r.Waves = []client.Wave{{Index: 0, Name: "all", Status: rollout.WaveRunning, Total: &total, Counts: &counts}}
	v.targets = []client.Target{
		{AgentID: "a", Status: rollout.TargetVerifying, VerifiedAt: at(0)},
		{AgentID: "b", Status: rollout.TargetVerifying, VerifiedAt: at(20 * time.Second)},
		{AgentID: "c", Status: rollout.TargetSucceeded},
	}
	var b strings.Builder
	v.writeWaves(&b)
	(result{stdout: b.String()}).has(t, "[######--------------] 1/3  verifying 2 · succeeded 1 · 2 in health wait, the last ends in 1m10s")
	v.r.Status = rollout.Failed
	b.Reset()
	v.writeWaves(&b)
	if out := b.String(); !strings.Contains(out, "2 in health wait\n") || strings.Contains(out, "ends in") {
		t.Errorf("a failed rollout counts down:\n%s", out)
	}
}
