package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/windows"
)

// finish makes every in-progress target succeed: it reports success and the
// health wait elapses.
func (f *fixture) finish() {
	for _, t := range f.ts {
		if t.Status == rollout.TargetInProgress {
			f.apply(t.AgentID)
		}
	}
	f.tick()
	f.advance(f.r.Policy.HealthWait)
	f.tick()
}

func TestTick_MaxConcurrent(t *testing.T) {
	cases := []struct {
		max, agents, wantStarted int
	}{
		{max: 2, agents: 5, wantStarted: 2},  // limited
		{max: 0, agents: 5, wantStarted: 5},  // 0 = unlimited
		{max: 50, agents: 5, wantStarted: 5}, // more slots than targets
		{max: 1, agents: 1, wantStarted: 1},  // exactly one
	}
	for _, c := range cases {
		ids := make([]string, c.agents)
		for i := range ids {
			ids[i] = string(rune('a' + i))
		}
		f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(c.max) }), ids)
		f.tick()
		if got := f.startedOrders(); got != c.wantStarted {
			t.Errorf("maxConcurrent %d, %d agents: started %d, want %d", c.max, c.agents, got, c.wantStarted)
		}
	}
}

func TestTick_VerifyingCountsTowardMaxConcurrent(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }), []string{"a", "b"})
	f.tick()
	f.apply("a")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.wantTarget("b", rollout.TargetPending) // the slot is taken by the health wait
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
	f.wantTarget("b", rollout.TargetInProgress) // the slot frees in the same pass
}

func TestTick_OfflineTargets_SkippedAfterGraceFromWaveStart(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.OfflineGracePeriod = 15 * time.Minute }), []string{"a", "off"})
	f.update("off", func(a *agent.Agent) { a.Online = false })
	f.tick()
	f.wantTarget("off", rollout.TargetPending)
	f.wantDeadline(t0.Add(10 * time.Minute)) // applyTimeout of "a" comes first
	f.apply("a")
	f.advance(time.Second)
	f.tick()
	f.wantDeadline(t0.Add(time.Second + time.Minute))
	f.now = t0.Add(15*time.Minute - time.Second)
	f.tick()
	f.wantTarget("off", rollout.TargetPending)
	f.wantDeadline(t0.Add(15 * time.Minute))
	f.now = t0.Add(15 * time.Minute)
	f.tick()
	f.wantTarget("off", rollout.TargetSkipped)
	if got := f.target("off").ReasonCode; got != SkipOffline {
		t.Fatalf("reason code %q, want %q", got, SkipOffline)
	}
	f.wantRollout(rollout.Completed)
}

func TestTick_OfflineTargetComingBack_Starts(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"off"})
	f.update("off", func(a *agent.Agent) { a.Online = false })
	f.tick()
	f.advance(5 * time.Minute)
	f.update("off", func(a *agent.Agent) { a.Online = true })
	f.tick()
	f.wantTarget("off", rollout.TargetInProgress)
}

func TestTick_AgentLeftFleet_Skipped(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a", "gone"})
	f.update("a", func(a *agent.Agent) { a.Fleet = "other" })
	delete(f.agents, "gone")
	f.tick()
	f.wantTarget("a", rollout.TargetSkipped)
	f.wantTarget("gone", rollout.TargetSkipped)
}

// An agent that moves to another fleet after its target started is no
// longer skipped: its target is evaluated to the end (docs/fleets.md, "An
// agent that moves"); only a target that had not started is left_fleet.
func TestTick_AgentMovedAfterStart_EvaluatedToTheEnd(t *testing.T) {
	t.Run("succeeds", func(t *testing.T) {
		for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
			f := newFixture(t, k, snap(k, nil), []string{"moved"})
			f.tick()
			f.wantTarget("moved", rollout.TargetInProgress)
			f.update("moved", func(a *agent.Agent) { a.Fleet = "other" })
			f.tick()
			f.wantTarget("moved", rollout.TargetInProgress) // not skipped: it started
			f.apply("moved")
			f.health("moved", true, agent.StatusOK, "")
			f.advance(time.Second)
			f.tick()
			f.wantTarget("moved", rollout.TargetVerifying)
			f.advance(f.r.Policy.HealthWait)
			f.tick()
			f.wantTarget("moved", rollout.TargetSucceeded)
			f.wantRollout(rollout.Completed)
		}
	})
	t.Run("fails", func(t *testing.T) {
		f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"moved", "stays"})
		f.tick()
		f.update("moved", func(a *agent.Agent) {
			a.Fleet = "other"
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: f.target("moved").ToRef, Status: agent.ConfigFailed, Error: "unknown receiver", Since: f.now}
		})
		f.tick()
		f.wantTarget("moved", rollout.TargetFailed) // judged by what it reports, as any started target
		if code := f.target("moved").ReasonCode; code == SkipLeftFleet {
			t.Fatalf("reason code %q: a started target is evaluated, not left", code)
		}
	})
}

func TestTick_MaintenanceWindow_DelaysStart(t *testing.T) {
	// Window 22:00-05:00 in the agent's zone Europe/Berlin; t0 is 13:00 there.
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) {
		s.MaintenanceWindows = []windows.Window{{Start: 22 * 60, End: 5 * 60}}
	}), []string{"berlin", "utc"})
	f.update("berlin", func(a *agent.Agent) { a.Attributes = map[string]string{"site.timezone": "Europe/Berlin"} })
	f.tick()
	f.wantTarget("berlin", rollout.TargetWaitingWindow)
	f.wantTarget("utc", rollout.TargetWaitingWindow)
	opensBerlin := time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC) // 22:00 CET
	f.wantDeadline(opensBerlin)
	f.now = opensBerlin
	f.tick()
	f.wantTarget("berlin", rollout.TargetInProgress)
	f.wantTarget("utc", rollout.TargetWaitingWindow)
	f.wantDeadline(opensBerlin.Add(10 * time.Minute)) // applyTimeout of "berlin" before "utc" opens at 22:00
	f.apply("berlin")
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("berlin", rollout.TargetVerifying)
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("berlin", rollout.TargetSucceeded)
	f.wantDeadline(time.Date(2026, 3, 2, 22, 0, 0, 0, time.UTC)) // the window of "utc" opens
}

func TestTick_RunningTargetsNotInterruptedWhenWindowCloses(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) {
		s.MaintenanceWindows = []windows.Window{{Start: 11 * 60, End: 12*60 + 30, Timezone: "UTC"}}
	}), []string{"a"})
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
	f.advance(time.Hour) // the window closed at 12:30
	f.apply("a")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
}

func TestTick_WavesRunInOrder(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"c1"}, []string{"r1", "r2"})
	f.tick()
	f.wantTarget("c1", rollout.TargetInProgress)
	f.wantTarget("r1", rollout.TargetPending) // wave 1 waits for wave 0
	f.wantWave(1, rollout.WavePending)
	f.apply("c1")
	f.tick()
	f.wantTarget("r1", rollout.TargetPending) // c1 is only verifying
	f.advance(time.Minute)
	f.tick()
	f.wantWave(0, rollout.WaveCompleted)
	f.wantWave(1, rollout.WaveRunning)
	f.wantTarget("r1", rollout.TargetInProgress)
	f.finish()
	f.wantRollout(rollout.Completed)
}

func TestTick_EmptyWaveSkipped(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{}, []string{"a"})
	f.tick()
	f.wantWave(0, rollout.WaveSkipped)
	f.wantTarget("a", rollout.TargetInProgress)
}

func TestTick_RequireApproval_ParksUntilApproved(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.Waves = []policy.Wave{{Name: "canary", Percent: 10}, {Name: "rest", Percent: 100, RequireApproval: true}}
	})
	f := newFixture(t, policy.KindConfig, s, []string{"c"}, []string{"r"})
	f.tick()
	f.finish()
	f.wantRollout(rollout.WaitingApproval)
	f.wantWave(1, rollout.WaveWaitingApproval)
	f.wantTarget("r", rollout.TargetPending)
	if f.r.StatusReason != `wave 1 "rest" waits for approval` {
		t.Fatalf("statusReason %q", f.r.StatusReason)
	}
	if want := f.r.Waves[1].WaitingSince.Add(72 * time.Hour); !f.last.NextDeadline.Equal(want) {
		t.Fatalf("waiting for approval schedules only its expiry %s, got %s", want, f.last.NextDeadline)
	}
	f.advance(time.Hour)
	f.tick()
	f.wantTarget("r", rollout.TargetPending)
	if err := f.act(Request{Action: ActionApprove, Wave: 0}); err == nil {
		t.Fatal("approving a completed wave must be refused")
	}
	if err := f.act(Request{Action: ActionApprove, Wave: 1}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.Running)
	f.tick()
	if f.r.StatusReason != "" {
		t.Fatalf("statusReason %q after the approval, want none", f.r.StatusReason)
	}
	f.wantTarget("r", rollout.TargetInProgress)
	f.finish()
	f.wantRollout(rollout.Completed)
}

func TestTick_ThresholdByCount_Pauses(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.FailureThreshold.MaxFailed = 2 }), []string{"a", "b", "c"}, []string{"d"})
	f.tick()
	f.update("a", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed}
	})
	f.tick()
	f.wantRollout(rollout.Running) // one below the threshold
	f.update("b", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed}
	})
	f.tick()
	f.wantRollout(rollout.Paused)
	f.wantWave(0, rollout.WaveFailed)
	if !strings.Contains(f.r.StatusReason, "failure threshold") || !strings.Contains(f.r.StatusReason, "2 of 3") {
		t.Fatalf("statusReason %q must name the threshold and the counts", f.r.StatusReason)
	}
	// Running targets are evaluated to the end, no new ones start.
	f.apply("c")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("c", rollout.TargetSucceeded)
	f.wantTarget("d", rollout.TargetPending)
	f.wantWave(1, rollout.WavePending)
}

func TestTick_ThresholdByPercent(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.FailureThreshold.MaxFailedPercent = 20 }), ids)
	f.tick()
	fail := func(id string) {
		f.update(id, func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed}
		})
	}
	fail("a")
	f.tick()
	f.wantRollout(rollout.Running) // 10 % < 20 %: only the percentage rule applies
	fail("b")
	f.tick()
	f.wantRollout(rollout.Paused) // 20 %
}

func TestTick_OnFailureRollback(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.OnFailure = policy.OnFailureRollback }), []string{"ok", "bad", "late"})
	f.r.Policy.MaxConcurrent = 2
	f.tick()
	f.apply("ok")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("ok", rollout.TargetSucceeded)
	f.wantTarget("late", rollout.TargetInProgress)
	f.update("bad", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed}
	})
	f.tick()
	f.wantRollout(rollout.RollingBack)
	resets := map[string]string{}
	for _, o := range f.last.Orders {
		if o.Kind == OrderReset {
			resets[o.AgentID] = o.Ref
		}
	}
	if len(resets) != 3 || resets["ok"] != "h-old" || resets["bad"] != "h-old" || resets["late"] != "h-old" {
		t.Fatalf("reset orders %v, want ok, bad and late back to h-old", resets)
	}
	// "late" never applied h-new: it is back on h-old at once. The others end
	// as rolled_back when they report h-old again.
	f.wantTarget("late", rollout.TargetRolledBack)
	f.wantTarget("bad", rollout.TargetFailed)
	f.wantTarget("ok", rollout.TargetSucceeded)
	for _, id := range []string{"ok", "bad"} {
		f.update(id, func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied}
		})
	}
	f.advance(time.Second)
	f.tick()
	f.wantTarget("ok", rollout.TargetRolledBack)
	f.wantTarget("bad", rollout.TargetRolledBack)
	f.wantRollout(rollout.RolledBack)
	if f.events[len(f.events)-1] != "rollout.rolled_back" {
		t.Fatalf("events %v, want rollout.rolled_back last", f.events)
	}
}

func TestTick_RollbackNotFinishedWithinApplyTimeout_Fails(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	f.tick()
	f.apply("a")
	f.tick()
	if err := f.act(Request{Action: ActionRollback}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.RollingBack)
	f.wantDeadline(t0.Add(10 * time.Minute))
	f.advance(10*time.Minute - time.Second)
	f.tick()
	f.wantRollout(rollout.RollingBack)
	f.advance(time.Second)
	f.tick()
	f.wantRollout(rollout.Failed)
	f.advance(time.Hour)
	before := f.r
	f.tick()
	if f.r.Status != before.Status || len(f.last.Changed) != 0 {
		t.Fatal("a failed rollout must not be evaluated")
	}
}

func TestTick_RollbackSkipsAgentsThatMoved(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a", "moved"})
	f.tick()
	f.apply("a")
	f.apply("moved")
	f.tick()
	f.update("moved", func(a *agent.Agent) { a.Fleet = "other" })
	if err := f.act(Request{Action: ActionRollback}); err != nil {
		t.Fatal(err)
	}
	f.wantTarget("moved", rollout.TargetSkipped)
	for _, o := range f.last.Orders {
		if o.AgentID == "moved" {
			t.Fatalf("the rollback must not touch an agent of another fleet: %+v", o)
		}
	}
	f.update("a", func(a *agent.Agent) { a.ServiceVersion = "0.160.0" })
	f.tick()
	f.wantRollout(rollout.RolledBack)
}
