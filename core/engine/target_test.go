package engine

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

func TestTick_ConfigSuccess_EndsExactlyAtHealthWait(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.HealthWait = 5 * time.Minute }), []string{"a"})
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
	if len(f.orders) != 1 || f.orders[0] != (Order{Kind: OrderStart, AgentID: "a", Ref: "h-new", Attempt: 1}) {
		t.Fatalf("orders %+v, want one start of h-new", f.orders)
	}
	f.advance(10 * time.Second)
	f.apply("a")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	verifiedAt := *f.target("a").VerifiedAt
	if !verifiedAt.Equal(f.now) {
		t.Fatalf("verifiedAt %s, want %s", verifiedAt, f.now)
	}
	f.wantDeadline(verifiedAt.Add(5 * time.Minute))
	f.now = verifiedAt.Add(5*time.Minute - time.Nanosecond)
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying) // one nanosecond before the end
	f.now = verifiedAt.Add(5 * time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
	f.wantRollout(rollout.Completed)
}

func TestTick_HealthWaitZero_Means60s(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.HealthWait = 0 }), []string{"a"})
	f.tick()
	f.apply("a")
	f.tick()
	f.advance(59 * time.Second)
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(time.Second)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
}

func TestTick_VersionSupervisorRestartSequence_Succeeds(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	f.tick()
	f.advance(30 * time.Second)
	f.apply("a") // new version, healthy=false, no status
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(2 * time.Second)
	f.health("a", false, agent.StatusStarting, "")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(3 * time.Second)
	f.health("a", true, agent.StatusOK, "")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(60 * time.Second)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
}

func TestTick_VersionSingleRestartAllowed_CrashLoopFails(t *testing.T) {
	cases := []struct {
		name     string
		restarts int
		want     rollout.TargetStatus
	}{
		{name: "single restart after the update", restarts: 1, want: rollout.TargetSucceeded},
		{name: "crash loop", restarts: 2, want: rollout.TargetFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.HealthWait = 5 * time.Minute }), []string{"a"})
			f.tick()
			f.apply("a")
			f.tick()
			f.advance(time.Second)
			f.health("a", true, agent.StatusOK, "")
			f.tick()
			for i := 0; i < c.restarts; i++ {
				f.advance(10 * time.Second)
				f.health("a", false, agent.StatusStarting, "")
				f.tick()
				f.advance(5 * time.Second)
				f.health("a", true, agent.StatusOK, "")
				f.tick()
			}
			f.advance(5 * time.Minute)
			f.tick()
			f.wantTarget("a", c.want)
			if c.want == rollout.TargetFailed && f.target("a").ReasonCode != FailCrashLoop {
				t.Fatalf("reason code %q, want %q", f.target("a").ReasonCode, FailCrashLoop)
			}
		})
	}
}

func TestTick_StaleUnhealthyReport_IgnoredForTwoMinutes(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	f.tick()
	f.advance(10 * time.Second)
	f.health("a", false, "StatusFatalError", "shutting down") // the old process stopping
	f.advance(5 * time.Second)
	f.update("a", func(a *agent.Agent) { a.ServiceVersion, a.VersionSince = "0.161.0", f.now }) // version reported, no new health yet
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	verifiedAt := *f.target("a").VerifiedAt
	f.wantDeadline(verifiedAt.Add(time.Minute)) // healthWait 60s comes first
	f.now = verifiedAt.Add(RestartTolerance - time.Second)
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying) // still tolerated
	f.now = verifiedAt.Add(RestartTolerance)
	f.tick()
	f.wantTarget("a", rollout.TargetFailed) // the new process never reported: the error counts
	if got := f.target("a").ReasonCode; got != FailUnhealthy {
		t.Fatalf("reason code %q, want %q", got, FailUnhealthy)
	}
}

func TestTick_StartupReports_WaitAtMostApplyTimeout(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.ApplyTimeout = 10 * time.Minute }), []string{"a"})
	f.tick()
	f.apply("a")
	f.tick()
	verifiedAt := *f.target("a").VerifiedAt
	for _, st := range []string{agent.StatusStarting, agent.StatusStopping, ""} {
		f.advance(time.Minute)
		f.health("a", false, st, "")
		f.tick()
		f.wantTarget("a", rollout.TargetVerifying)
	}
	f.now = verifiedAt.Add(10*time.Minute - time.Second)
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.now = verifiedAt.Add(10 * time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetFailed)
	if got := f.target("a").ReasonCode; got != FailNotHealthy {
		t.Fatalf("reason code %q, want %q", got, FailNotHealthy)
	}
}

func TestTick_TargetFailures(t *testing.T) {
	cases := []struct {
		name string
		kind policy.Kind
		act  func(f *fixture) // after the target entered in_progress
		code string
	}{
		{name: "config FAILED", kind: policy.KindConfig, act: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Error: "bad yaml"}
			})
		}, code: FailApplyFailed},
		{name: "INSTALL_FAILED", kind: policy.KindVersion, act: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.Package = agent.PackageStatus{Version: "0.161.0", Status: agent.PackageInstallFailed}
			})
		}, code: FailApplyFailed},
		{name: "applyTimeout", kind: policy.KindConfig, act: func(f *fixture) { f.advance(10 * time.Minute) }, code: FailApplyTimeout},
		{name: "offline in the health wait", kind: policy.KindConfig, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Second)
			f.update("a", func(a *agent.Agent) { a.Online = false })
		}, code: FailOffline},
		{name: "error status in the health wait", kind: policy.KindConfig, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Second)
			f.health("a", false, "StatusRecoverableError", "")
		}, code: FailUnhealthy},
		{name: "lastError with StatusStarting", kind: policy.KindConfig, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Second)
			f.health("a", false, agent.StatusStarting, "exporter failed")
		}, code: FailUnhealthy},
		{name: "no longer on the target config", kind: policy.KindConfig, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.update("a", func(a *agent.Agent) { a.RemoteConfig.Hash = "h-other" })
		}, code: FailTargetLost},
		{name: "version restart during a config health wait", kind: policy.KindConfig, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.update("a", func(a *agent.Agent) { a.ServiceVersion = "0.161.0" })
		}, code: FailVersionRestart},
		{name: "version lost in the health wait", kind: policy.KindVersion, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.update("a", func(a *agent.Agent) { a.ServiceVersion = "0.160.0" })
		}, code: FailTargetLost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.kind, snap(c.kind, nil), []string{"a"})
			f.tick()
			c.act(f)
			f.tick()
			f.wantTarget("a", rollout.TargetFailed)
			if got := f.target("a").ReasonCode; got != c.code {
				t.Fatalf("reason code %q, want %q", got, c.code)
			}
		})
	}
}

func TestTick_OfflineInProgress_IsNoFailure(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	f.tick()
	f.update("a", func(a *agent.Agent) { a.Online = false }) // the update restarts the collector
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
}

func TestTick_ConfigStaleHealthyReport_Counts(t *testing.T) {
	// A configuration change need not restart the collector: the healthy
	// report from before the change still stands.
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	f.tick()
	f.apply("a")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
}

func TestTick_VersionStaleHealthyReport_DoesNotCount(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	f.tick()
	f.update("a", func(a *agent.Agent) { a.ServiceVersion, a.VersionSince = "0.161.0", f.now }) // health still from the old process
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying) // waits for the new process
	f.health("a", true, agent.StatusOK, "")
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
}

func TestTick_VersionTargetProgress_FollowsStatus(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	f.r.Executor = "manual"
	f.tick()
	if p := f.target("a").Progress; p == nil || p.Phase != progress.PhaseInstalling || p.Source != progress.SourceExecutor {
		t.Fatalf("progress %+v, want installing from the executor", p)
	}
	f.apply("a")
	f.health("a", true, agent.StatusOK, "")
	f.tick()
	if p := f.target("a").Progress; p.Phase != progress.PhaseHealthWait {
		t.Fatalf("phase %s, want health_wait while verifying", p.Phase)
	}
	f.advance(time.Minute)
	f.tick()
	if p := f.target("a").Progress; p.Phase != progress.PhaseSucceeded {
		t.Fatalf("phase %s, want succeeded", p.Phase)
	}
	f2 := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	f2.tick()
	if f2.target("a").Progress != nil {
		t.Fatal("configuration targets have no progress")
	}
}

// A collector still starting after its health wait ended has nothing due
// before applyTimeout: the next deadline is applyTimeout's end, not the
// health wait's end in the past, which made the state machine evaluate again
// at once, hundreds of times a second.
func TestTick_StartupAfterHealthWait_NextDeadlineIsApplyTimeout(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) {
		s.HealthWait, s.ApplyTimeout = 30*time.Second, 10*time.Minute
	}), []string{"a"})
	f.tick()
	f.apply("a")
	f.tick()
	verifiedAt := *f.target("a").VerifiedAt
	f.health("a", false, agent.StatusStarting, "")
	f.advance(time.Minute) // past the health wait, still starting
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.wantDeadline(verifiedAt.Add(10 * time.Minute))
	// Within the restart tolerance an old report neither fails nor succeeds:
	// the next moment is the tolerance's end.
	g := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.HealthWait = 30 * time.Second }), []string{"a"})
	g.tick()
	g.health("a", false, "StatusRecoverableError", "old process stopping")
	g.advance(time.Second)
	g.apply("a")
	g.update("a", func(a *agent.Agent) {
		a.Health = agent.Health{Healthy: false, Status: "StatusRecoverableError", LastError: "old", ReportedAt: t0}
	})
	g.tick()
	g.advance(45 * time.Second) // past the health wait, within the tolerance
	g.tick()
	g.wantTarget("a", rollout.TargetVerifying)
	g.wantDeadline(g.target("a").VerifiedAt.Add(RestartTolerance))
}

// A connection that closed counts as open for the reconnect grace: agents
// that move to another gateway task within it keep their health wait, and
// one that does not come back fails when the grace ends, with no event.
func TestTick_ReconnectGrace(t *testing.T) {
	hw := 60 * time.Second
	live := agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second}
	verifying := func(t *testing.T) *fixture {
		f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.HealthWait = hw }), []string{"a"})
		f.live = live
		f.update("a", func(a *agent.Agent) { a.LastSeen = f.now })
		f.tick()
		f.apply("a")
		f.tick()
		f.wantTarget("a", rollout.TargetVerifying)
		return f
	}
	t.Run("reconnects within the grace: succeeds", func(t *testing.T) {
		f := verifying(t)
		f.advance(20 * time.Second)
		f.update("a", func(a *agent.Agent) { a.Online, a.LastSeen = false, f.now }) // the task was replaced
		f.tick()
		f.wantTarget("a", rollout.TargetVerifying)
		f.wantDeadline(f.now.Add(10 * time.Second)) // judged again when the grace ends
		f.advance(time.Second)
		f.update("a", func(a *agent.Agent) { a.Online, a.LastSeen, a.ConnectedAt = true, f.now, f.now })
		f.tick()
		f.now = f.target("a").VerifiedAt.Add(hw)
		f.update("a", func(a *agent.Agent) { a.LastSeen = f.now })
		f.tick()
		f.wantTarget("a", rollout.TargetSucceeded)
	})
	t.Run("does not come back: fails when the grace ends", func(t *testing.T) {
		f := verifying(t)
		f.advance(20 * time.Second)
		closed := f.now
		f.update("a", func(a *agent.Agent) { a.Online, a.LastSeen = false, closed })
		f.tick()
		f.now = closed.Add(10*time.Second - time.Millisecond)
		f.tick()
		f.wantTarget("a", rollout.TargetVerifying)
		f.now = closed.Add(10 * time.Second)
		f.tick()
		f.wantTarget("a", rollout.TargetFailed)
		if got := f.target("a").ReasonCode; got != FailOffline {
			t.Fatalf("reason code %q, want %q", got, FailOffline)
		}
	})
	t.Run("silent beyond the liveness limit: offline at once", func(t *testing.T) {
		f := verifying(t)
		f.advance(91 * time.Second) // no heartbeat since verifying: its task died
		f.tick()
		f.wantTarget("a", rollout.TargetFailed)
	})
}

// noHealthCaps are the capabilities of the opamp-go example agent: it reports
// status and remote configuration, but not health.
const noHealthCaps = 0x1 | 0x2 | 0x4 | 0x8 // ReportsStatus, AcceptsRemoteConfig, ReportsEffectiveConfig, AcceptsPackages

// TestTick_NoHealthReports: an agent without ReportsHealth is judged by its
// connection and reports alone; its (never reported) health counts for
// nothing. The rows with other capabilities show that the rule is what
// decides: the same agent with ReportsHealth, or with unknown capabilities,
// waits for a healthy report that never comes.
func TestTick_NoHealthReports(t *testing.T) {
	const healthWait = 2 * time.Minute
	cases := []struct {
		name string
		kind policy.Kind
		caps uint64
		act  func(f *fixture) // after the target entered in_progress; the end is healthWait after verify
		want rollout.TargetStatus
		code string
	}{
		{name: "config APPLIED, online through the wait", kind: policy.KindConfig, caps: noHealthCaps, act: applyAndWait, want: rollout.TargetSucceeded},
		{name: "version reported, online through the wait", kind: policy.KindVersion, caps: noHealthCaps, act: applyAndWait, want: rollout.TargetSucceeded},
		{name: "config FAILED", kind: policy.KindConfig, caps: noHealthCaps, act: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Error: "bad yaml", Since: f.now}
			})
		}, want: rollout.TargetFailed, code: FailApplyFailed},
		{name: "INSTALL_FAILED", kind: policy.KindVersion, caps: noHealthCaps, act: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.Package = agent.PackageStatus{Version: "0.161.0", Status: agent.PackageInstallFailed, Since: f.now}
			})
		}, want: rollout.TargetFailed, code: FailApplyFailed},
		{name: "nothing reported within applyTimeout", kind: policy.KindConfig, caps: noHealthCaps, act: func(f *fixture) { f.advance(time.Hour) }, want: rollout.TargetFailed, code: FailApplyTimeout},
		{name: "config offline in the wait", kind: policy.KindConfig, caps: noHealthCaps, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Minute)
			f.update("a", func(a *agent.Agent) { a.Online = false })
		}, want: rollout.TargetFailed, code: FailOffline},
		{name: "version offline in the wait", kind: policy.KindVersion, caps: noHealthCaps, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Minute)
			f.update("a", func(a *agent.Agent) { a.Online = false })
		}, want: rollout.TargetFailed, code: FailOffline},
		{name: "config FAILED in the wait", kind: policy.KindConfig, caps: noHealthCaps, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.advance(time.Minute)
			f.update("a", func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigFailed })
		}, want: rollout.TargetFailed, code: FailTargetLost},
		{name: "version lost in the wait", kind: policy.KindVersion, caps: noHealthCaps, act: func(f *fixture) {
			f.apply("a")
			f.tick()
			f.update("a", func(a *agent.Agent) { a.ServiceVersion = "0.160.0" })
		}, want: rollout.TargetFailed, code: FailTargetLost},
		{name: "version package INSTALLED, online through the wait", kind: policy.KindVersion, caps: noHealthCaps, act: installAndWait, want: rollout.TargetSucceeded},
		{name: "version package INSTALLED, then another version installed", kind: policy.KindVersion, caps: noHealthCaps, act: func(f *fixture) {
			installAndWait(f)
			f.update("a", func(a *agent.Agent) { a.Package.Version = "0.160.0" })
		}, want: rollout.TargetFailed, code: FailTargetLost},
		{name: "with ReportsHealth: package INSTALLED is no success", kind: policy.KindVersion, caps: noHealthCaps | agent.CapabilityReportsHealth, act: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.Package = agent.PackageStatus{Version: "0.161.0", Status: agent.PackageInstalled, Since: f.now}
			})
			f.tick()
			f.advance(2 * time.Minute)
		}, want: rollout.TargetInProgress},
		{name: "with ReportsHealth: waits for health", kind: policy.KindVersion, caps: noHealthCaps | agent.CapabilityReportsHealth, act: applyAndWait, want: rollout.TargetVerifying},
		{name: "unknown capabilities: waits for health", kind: policy.KindVersion, caps: 0, act: applyAndWait, want: rollout.TargetVerifying},
		{name: "with ReportsHealth: unhealthy fails", kind: policy.KindConfig, caps: noHealthCaps | agent.CapabilityReportsHealth, act: applyUnhealthy, want: rollout.TargetFailed, code: FailUnhealthy},
		{name: "without ReportsHealth: a stray health report counts for nothing", kind: policy.KindConfig, caps: noHealthCaps, act: applyUnhealthy, want: rollout.TargetSucceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.kind, snap(c.kind, func(s *policy.Spec) { s.HealthWait = healthWait }), []string{"a"})
			f.update("a", func(a *agent.Agent) { a.Capabilities, a.Health = c.caps, agent.Health{} })
			f.tick()
			c.act(f)
			f.tick()
			f.wantTarget("a", c.want)
			if got := f.target("a").ReasonCode; got != c.code {
				t.Fatalf("reason code %q, want %q", got, c.code)
			}
		})
	}
}

// applyAndWait reports success now and lets the health wait run out.
func applyAndWait(f *fixture) {
	f.advance(10 * time.Second)
	f.apply("a")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(2 * time.Minute)
}

// installAndWait reports the target version's package INSTALLED (and no new
// service.version) now and lets the health wait run out.
func installAndWait(f *fixture) {
	f.advance(10 * time.Second)
	f.update("a", func(a *agent.Agent) {
		a.Package = agent.PackageStatus{Version: "0.161.0", Status: agent.PackageInstalled, Since: f.now}
	})
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.advance(2 * time.Minute)
}

// applyUnhealthy reports success, then an error status, then lets the wait run out.
func applyUnhealthy(f *fixture) {
	f.apply("a")
	f.tick()
	f.advance(time.Second)
	f.health("a", false, "StatusPermanentError", "exporter failed")
	f.tick()
	f.advance(2 * time.Minute)
}

// TestTick_ConfigStartNotCarriedOut_IsOrderedAgain: a configuration target
// is stored started before its desired hash is set; a pass that finds its
// agent not asked for the target's hash (the set failed, or the task died
// before it) orders the start again and changes nothing else. A version
// target is not: its start is carried out before it is stored.
func TestTick_ConfigStartNotCarriedOut_IsOrderedAgain(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a", "b"})
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
	f.orders = nil
	a := f.agents["a"]
	a.DesiredHash = "h-old" // the start's write never happened
	f.agents["a"] = a
	f.advance(time.Second)
	res := f.tick()
	if len(res.Orders) != 1 || res.Orders[0] != (Order{Kind: OrderStart, AgentID: "a", Ref: "h-new", Attempt: 1}) {
		t.Fatalf("orders %+v, want the start of a ordered again", res.Orders)
	}
	if len(res.Changed) != 0 || len(res.Events) != 0 {
		t.Fatalf("changed %+v, events %+v: want none", res.Changed, res.Events)
	}
	f.wantDeadline(t0.Add(policy.DefaultApplyTimeoutConfig))
	f.advance(time.Second)
	if res := f.tick(); len(res.Orders) != 0 {
		t.Fatalf("orders %+v once the agent is asked for the hash, want none", res.Orders)
	}

	v := newFixture(t, policy.KindVersion, snap(policy.KindVersion, nil), []string{"a"})
	v.tick()
	v.advance(time.Second)
	if res := v.tick(); len(res.Orders) != 0 {
		t.Fatalf("version orders %+v, want none", res.Orders)
	}
}

// A pass whose leases were read before a new gateway task wrote its own
// (readers cache them for seconds) meets that task's agents just connected:
// they start, judged by the connection just written. Judged offline, they
// waited a whole offlineGracePeriod, since no event of theirs came after.
func TestTick_AgentsOfATaskNewerThanTheLeases(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a", "b"})
	f.live = agent.Liveness{Silence: 90 * time.Second, Leases: agent.Leases{"old-task": {Until: f.now.Add(time.Minute)}}}
	f.update("a", func(a *agent.Agent) { a.Task, a.LastSeen, a.ConnectedAt = "new-task", f.now, f.now })
	f.update("b", func(a *agent.Agent) { a.Task, a.LastSeen = "long-gone-task", f.now.Add(-time.Hour) })
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
	f.wantTarget("b", rollout.TargetPending)
}
