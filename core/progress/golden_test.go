package progress

import (
	"testing"

	"github.com/myriarch/myriarch/core/agent"
)

// phases lists the phase of every frame, for assertions next to the golden.
func phases(frames []frame) []Phase {
	var out []Phase
	for _, f := range frames {
		out = append(out, f.Progress.Phase)
	}
	return out
}

func assertPhases(t *testing.T, frames []frame, want ...Phase) {
	t.Helper()
	got := phases(frames)
	if len(got) != len(want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tick %q: phase %s, want %s (%s)", frames[i].Tick, got[i], want[i], shape(frames[i].Progress))
		}
	}
}

// A full updater attempt, from the offer to the end of the health wait.
func TestDerive_Golden_UpdaterAttempt(t *testing.T) {
	previous := host("v0.161.0", "succeeded", -86400, "health_check:done:-86300:-86290")
	downloading := withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0"))
	downloading.Package = agent.PackageStatus{Version: "0.162.0", Status: agent.PackageDownloading, DownloadPercent: 40}
	steps := func(status string, s ...string) agent.Agent { return withUpdate(host("v0.162.0", status, 5, s...)) }
	done := []string{"downloading:done:5:20", "verifying:done:20:22", "installing:done:22:30", "restarting:done:30:35"}
	ticks := []tick{
		{"offered, the component still shows the previous update", target("in_progress"), withUpdate(previous), 1},
		{"downloading 40%", target("in_progress"), downloading, 10},
		{"verifying", target("in_progress"), steps("verifying", done[0], "verifying:running:20:0"), 21},
		{"installing", target("in_progress"), steps("installing", done[0], done[1], "installing:running:22:0"), 25},
		{"restarting", target("in_progress"), steps("restarting", append(done[:3:3], "restarting:running:30:0")...), 31},
		{"health_check", target("in_progress"), steps("health_check", append(done, "health_check:running:35:0")...), 36},
		{"target verifying", verified(target("verifying"), 40), steps("health_check", append(done, "health_check:running:35:0")...), 40},
		{"updater done, health wait runs", verified(target("verifying"), 40), steps("succeeded", append(done, "health_check:done:35:50")...), 50},
		{"target succeeded", finished(verified(target("succeeded"), 40), 100), steps("succeeded", append(done, "health_check:done:35:50")...), 100},
		{"frozen", finished(verified(target("succeeded"), 40), 100), withUpdate(nil), 200},
	}
	frames := play(ticks)
	assertPhases(t, frames, PhaseOffered, PhaseDownloading, PhaseVerifying, PhaseInstalling, PhaseRestarting,
		PhaseHealthCheck, PhaseHealthWait, PhaseHealthWait, PhaseSucceeded, PhaseSucceeded)
	if got := frames[1].Progress.DownloadPercent; got != 40 {
		t.Errorf("downloadPercent %d, want 40", got)
	}
	if frames[9].Progress != frames[8].Progress {
		t.Errorf("a succeeded target's progress changed: %s", shape(frames[9].Progress))
	}
	golden(t, "updater_attempt", frames)
}

// The engine fails the target during the updater's health check; the
// progress follows the host's rollback to its two-step end.
func TestDerive_Golden_HostRollback(t *testing.T) {
	done := []string{"downloading:done:5:20", "verifying:done:20:22", "installing:done:22:30", "restarting:done:30:35"}
	steps := func(status string, s ...string) agent.Agent {
		return withUpdate(host("v0.162.0", status, 5, append(append([]string(nil), done...), s...)...))
	}
	failedAt := finished(verified(target("failed"), 40), 60)
	failedAt.Reason = "the agent reported an error during the health wait"
	ticks := []tick{
		{"health wait", verified(target("verifying"), 40), steps("health_check", "health_check:running:35:0"), 45},
		{"target failed, updater still checks", failedAt, steps("health_check", "health_check:running:35:0"), 60},
		{"updater rolls back", failedAt, steps("rolling_back", "health_check:failed:35:70", "rolling_back:running:70:0"), 70},
		{"rollback step done, component still rolling_back", failedAt, steps("rolling_back", "health_check:failed:35:70", "rolling_back:done:70:80"), 80},
		{"attempt ended rolled_back", failedAt, steps("rolled_back", "health_check:failed:35:70", "rolling_back:done:70:80"), 81},
		{"frozen", failedAt, withUpdate(nil), 90},
	}
	frames := play(ticks)
	assertPhases(t, frames, PhaseHealthWait, PhaseFailed, PhaseFailed, PhaseFailed, PhaseRolledBack, PhaseRolledBack)
	want := []string{
		"health_wait updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:running",
		"failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:running health_wait:failed",
		"failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:running health_wait:failed",
		"failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:done health_wait:failed",
		"rolled_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:done health_wait:skipped",
	}
	for i, w := range want {
		if got := shape(frames[i].Progress); got != w {
			t.Errorf("tick %q:\n got %s\nwant %s", frames[i].Tick, got, w)
		}
	}
	for i, following := range []bool{false, true, true, true, false, false} {
		if got := frames[i].Progress.Following(); got != following {
			t.Errorf("tick %q: following %v, want %v", frames[i].Tick, got, following)
		}
	}
	if frames[5].Progress != frames[4].Progress {
		t.Error("the progress changed after the attempt ended")
	}
	golden(t, "host_rollback", frames)
}

// An updater that reports only the OpAMP package status.
func TestDerive_Golden_PackageStatus(t *testing.T) {
	ticks := []tick{
		{"offer pending", target("in_progress"), withPackage("0.162.0", agent.PackageInstallPending, 0, ""), 1},
		{"downloading 40%", target("in_progress"), withPackage("0.162.0", agent.PackageDownloading, 40, ""), 10},
		{"installing", target("in_progress"), withPackage("0.162.0", agent.PackageInstalling, 100, ""), 20},
		{"installed, collector restarts", target("in_progress"), withPackage("0.162.0", agent.PackageInstalled, 100, ""), 30},
		{"target verifying", verified(target("verifying"), 40), withPackage("0.162.0", agent.PackageInstalled, 100, ""), 40},
		{"target succeeded", finished(verified(target("succeeded"), 40), 100), withPackage("0.162.0", agent.PackageInstalled, 100, ""), 100},
	}
	frames := play(ticks)
	assertPhases(t, frames, PhaseOffered, PhaseDownloading, PhaseInstalling, PhaseRestarting, PhaseHealthWait, PhaseSucceeded)
	golden(t, "package_status", frames)
}

// The manual executor: offered, installing (external update), health_wait.
func TestDerive_Golden_ManualExecutor(t *testing.T) {
	manual := func(f TargetFacts) TargetFacts { f.Executor = ExecutorManual; return f }
	ticks := []tick{
		{"waiting for the version", manual(target("in_progress")), agent.Agent{ID: "a1"}, 1},
		{"target verifying", manual(verified(target("verifying"), 600)), agent.Agent{ID: "a1"}, 600},
		{"target succeeded", manual(finished(verified(target("succeeded"), 600), 660)), agent.Agent{ID: "a1"}, 660},
	}
	frames := play(ticks)
	assertPhases(t, frames, PhaseInstalling, PhaseHealthWait, PhaseSucceeded)
	if got, want := frames[0].Progress.Steps[1].Detail, "external update, waiting for version 0.162.0"; got != want {
		t.Errorf("installing detail %q, want %q", got, want)
	}
	golden(t, "manual_executor", frames)
}

// The updater still rolls back when the follow limit is reached: the
// following ends there and the progress freezes.
func TestDerive_Golden_FollowLimit(t *testing.T) {
	done := []string{"downloading:done:5:20", "verifying:done:20:22", "installing:done:22:30", "restarting:done:30:35"}
	steps := func(status string, s ...string) agent.Agent {
		return withUpdate(host("v0.162.0", status, 5, append(append([]string(nil), done...), s...)...))
	}
	failedAt := finished(verified(target("failed"), 40), 60)
	limit := 60 + 15*60
	rolling := steps("rolling_back", "health_check:failed:35:70", "rolling_back:running:70:0")
	ticks := []tick{
		{"target failed, updater still checks", failedAt, steps("health_check", "health_check:running:35:0"), 60},
		{"updater rolls back", failedAt, rolling, 70},
		{"one second before the limit", failedAt, rolling, limit - 1},
		{"limit reached", failedAt, rolling, limit},
		{"frozen", failedAt, steps("rolled_back", "health_check:failed:35:70", "rolling_back:done:70:2000"), 2000},
	}
	frames := play(ticks)
	assertPhases(t, frames, PhaseFailed, PhaseFailed, PhaseFailed, PhaseFailed, PhaseFailed)
	for i, following := range []bool{true, true, true, false, false} {
		if got := frames[i].Progress.Following(); got != following {
			t.Errorf("tick %q: following %v, want %v", frames[i].Tick, got, following)
		}
	}
	if frames[2].Progress != frames[1].Progress {
		t.Error("an unchanged tick made a new progress")
	}
	if frames[4].Progress != frames[3].Progress {
		t.Error("the progress changed after the following ended")
	}
	golden(t, "follow_limit", frames)
}
