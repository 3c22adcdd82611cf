package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/windows"
)

// A target behind maxConcurrent is judged when its turn comes: its agent
// left the fleet, or stayed offline past offlineGracePeriod, while others
// ran ahead of it, and it waits pending until then; it is skipped in the
// evaluation that frees the capacity, and the next target starts in the
// same evaluation.
func TestStartTargets_JudgedWhenTheirTurnComes(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }),
		[]string{"a1", "a2", "a3", "a4"})
	f.tick()
	f.wantTarget("a1", rollout.TargetInProgress)
	f.update("a2", func(a *agent.Agent) { a.Fleet = "other" })
	f.update("a3", func(a *agent.Agent) { a.Online = false })
	f.advance(16 * time.Minute) // past the default grace period of 15 minutes
	f.apply("a1")
	f.tick()
	f.wantTarget("a1", rollout.TargetVerifying)
	f.wantTarget("a2", rollout.TargetPending)
	f.wantTarget("a3", rollout.TargetPending)
	if f.last.Held != (Held{MaxConcurrent: 3}) {
		t.Fatalf("held %+v, want the three behind maxConcurrent", f.last.Held)
	}
	f.advance(time.Minute)
	f.tick() // a1 succeeds: a2 and a3 have their turn, a4 starts
	f.wantTarget("a1", rollout.TargetSucceeded)
	if got := f.target("a2"); got.Status != rollout.TargetSkipped || got.ReasonCode != SkipLeftFleet {
		t.Errorf("a2 %s (%s), want skipped as gone from the fleet", got.Status, got.ReasonCode)
	}
	if got := f.target("a3"); got.Status != rollout.TargetSkipped || got.ReasonCode != SkipOffline {
		t.Errorf("a3 %s (%s), want skipped as offline", got.Status, got.ReasonCode)
	}
	f.wantTarget("a4", rollout.TargetInProgress)
}

// An offline agent behind maxConcurrent that is back online when its turn
// comes starts, even after the grace period counted from the wave's start.
func TestStartTargets_BackOnlineBeforeItsTurn(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }),
		[]string{"a1", "a2"})
	f.update("a2", func(a *agent.Agent) { a.Online = false })
	f.tick()
	f.advance(20 * time.Minute)
	f.update("a2", func(a *agent.Agent) { a.Online = true })
	f.apply("a1")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a1", rollout.TargetSucceeded)
	f.wantTarget("a2", rollout.TargetInProgress)
}

// A target that waits for its maintenance window and then falls behind
// maxConcurrent goes back to pending when its window opens, and keeps
// waiting for the window, with the window's opening as a deadline, while
// it is closed.
func TestStartTargets_WindowBehindMaxConcurrent(t *testing.T) {
	// The window 21:00-05:00 in each agent's zone; t0 is 12:00 UTC, 13:00
	// in Berlin and 21:00 in Tokyo. Tokyo's update may take a day.
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) {
		s.MaxConcurrent = intp(1)
		s.ApplyTimeout = 24 * time.Hour
		s.MaintenanceWindows = []windows.Window{{Start: 21 * 60, End: 5 * 60}}
	}), []string{"berlin", "tokyo"})
	f.update("berlin", func(a *agent.Agent) { a.Attributes = map[string]string{"site.timezone": "Europe/Berlin"} })
	f.update("tokyo", func(a *agent.Agent) { a.Attributes = map[string]string{"site.timezone": "Asia/Tokyo"} })
	f.tick()
	f.wantTarget("berlin", rollout.TargetWaitingWindow)
	f.wantTarget("tokyo", rollout.TargetInProgress)
	opensBerlin := time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC) // 21:00 CET
	f.advance(time.Hour)                                        // 14:00 in Berlin: still closed
	f.tick()
	f.wantTarget("berlin", rollout.TargetWaitingWindow)
	f.wantDeadline(opensBerlin)
	if f.last.Held != (Held{MaxConcurrent: 1}) {
		t.Errorf("held %+v, want berlin behind maxConcurrent", f.last.Held)
	}
	f.now = opensBerlin
	f.tick()
	f.wantTarget("tokyo", rollout.TargetInProgress)
	f.wantTarget("berlin", rollout.TargetPending)
}

// An evaluation that reads agents only when asked (Input.Read) reads those
// of the targets in flight and of the next ones up to maxConcurrent, not
// those of the whole wave; one that starts nothing and has nothing in
// flight reads none.
func TestEvaluate_ReadsTheAgentsItNeeds(t *testing.T) {
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = string(rune('A'+i/26)) + string(rune('a'+i%26))
	}
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(5) }), ids)
	f.update(ids[1], func(a *agent.Agent) { a.Online = false })
	f.tick() // the first 5 read, one of them offline: 2 more, one read ahead for it; 5 start
	if f.lazyRead != 7 || f.last.Started != 5 {
		t.Fatalf("%d agents read, %d started; want 7 and 5", f.lazyRead, f.last.Started)
	}
	f.lazyRead = 0
	f.advance(time.Second)
	f.tick() // the 5 in flight; the offline one waits behind them
	if f.lazyRead != 5 {
		t.Fatalf("%d agents read with 5 in flight, want 5", f.lazyRead)
	}
	in := Input{Rollout: f.r, Targets: f.ts, Now: f.now, Read: map[string]bool{}}
	in.Rollout.Status = rollout.Paused
	if res := Evaluate(in); len(res.Missing) != 5 {
		t.Errorf("paused with 5 in flight: %d agents missing, want those 5", len(res.Missing))
	}
}

// A wave whose first agents are mostly offline is read in a few rounds,
// each reading ahead one more agent for every one held back, not in one
// round per maxConcurrent agents: 180 offline before 20 online under
// maxConcurrent 10 take 6 rounds (20 reading only the free slots' worth).
func TestEvaluate_MostlyOfflineWaveReadsInFewRounds(t *testing.T) {
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%03d", i)
	}
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(10) }), ids)
	for _, id := range ids[:180] {
		f.update(id, func(a *agent.Agent) { a.Online = false })
	}
	f.tick()
	if f.last.Started != 10 || f.last.Held.Offline != 180 {
		t.Fatalf("started %d, %d offline; want 10 and 180", f.last.Started, f.last.Held.Offline)
	}
	if f.lazyRounds > 6 {
		t.Errorf("%d rounds of reads, want at most 6", f.lazyRounds)
	}
}
