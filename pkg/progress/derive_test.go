package progress

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

const allPending = "downloading:pending verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"

func TestDerive_AttemptMatching(t *testing.T) {
	tests := []struct {
		name    string
		version string
		began   int // seconds relative to the target's start
		want    string
	}{
		{"same version, began after the target", "v0.162.0", 5, "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"began 1 minute before the target", "v0.162.0", -60, "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"began exactly 2 minutes before", "v0.162.0", -120, "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"began 3 minutes before: an older attempt", "v0.162.0", -180, "offered updater offered:running " + allPending},
		{"began 2 minutes and 1 second before", "v0.162.0", -121, "offered updater offered:running " + allPending},
		{"another version", "v0.161.0", 5, "offered updater offered:running " + allPending},
		{"version without the leading v", "0.162.0", 5, "offered updater offered:running " + allPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := withUpdate(host(tt.version, "downloading", tt.began, "downloading:running:5:0"))
			if got := shape(Derive(nil, target("in_progress"), a, at(10))); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDerive_UpdaterSteps(t *testing.T) {
	tests := []struct {
		name  string
		u     *agent.UpdateComponent
		want  string
		error string
	}{
		{"missed reports: steps before the reached one are done", host("v0.162.0", "installing", 5, "installing:running:22:0"), "installing updater offered:done downloading:done verifying:done installing:running " + "restarting:pending health_check:pending health_wait:pending", ""},
		{"keys without the step: prefix", &agent.UpdateComponent{Status: "downloading", Version: "v0.162.0", StartedAt: at(5), Steps: map[string]agent.UpdateStep{"downloading": {Status: "running", StartedAt: at(5)}}}, "downloading updater offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", ""},
		{"a skipped step stays skipped", host("v0.162.0", "installing", 5, "downloading:done:5:20", "verifying:skipped:20:20", "installing:running:20:0"), "installing updater offered:done downloading:done verifying:skipped installing:running " + "restarting:pending health_check:pending health_wait:pending", ""},
		{"a failed step fails the phase with its error", host("v0.162.0", "failed", 5, "downloading:failed:5:9"), "failed updater offered:done downloading:failed verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", "downloading failed"},
		{"updater done, version not reported yet", host("v0.162.0", "succeeded", 5, "health_check:done:35:50"), "health_check updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:pending", ""},
		{"host rollback running while in_progress", host("v0.162.0", "rolling_back", 5, "health_check:failed:35:40", "rolling_back:running:40:0"), "rolling_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:running health_wait:pending", "health_check failed"},
		{"host rollback ended while in_progress", host("v0.162.0", "rolled_back", 5, "health_check:failed:35:40", "rolling_back:done:40:50"), "rolled_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:done health_wait:skipped", "health_check failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Derive(nil, target("in_progress"), withUpdate(tt.u), at(60))
			if got := shape(p); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
			if p.Error != tt.error {
				t.Errorf("error %q, want %q", p.Error, tt.error)
			}
		})
	}
}

func TestDerive_PackageStatus(t *testing.T) {
	tests := []struct {
		name    string
		a       agent.Agent
		want    string
		percent int
		error   string
	}{
		{"nothing reported", agent.Agent{}, "offered package_status offered:running " + allPending, 0, ""},
		{"INSTALL_PENDING", withPackage("0.162.0", agent.PackageInstallPending, 0, ""), "offered package_status offered:running " + allPending, 0, ""},
		{"DOWNLOADING", withPackage("0.162.0", agent.PackageDownloading, 40, ""), "downloading package_status offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", 40, ""},
		{"DOWNLOADING above 100 is clamped", withPackage("0.162.0", agent.PackageDownloading, 140, ""), "downloading package_status offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", 100, ""},
		{"INSTALLING", withPackage("v0.162.0", agent.PackageInstalling, 100, ""), "installing package_status offered:done downloading:done verifying:done installing:running restarting:pending health_check:pending health_wait:pending", 100, ""},
		{"INSTALLED: the collector restarts", withPackage("0.162.0", agent.PackageInstalled, 100, ""), "restarting package_status offered:done downloading:done verifying:done installing:done restarting:running health_check:pending health_wait:pending", 100, ""},
		{"INSTALL_FAILED", withPackage("0.162.0", agent.PackageInstallFailed, 100, "disk full"), "failed package_status offered:done downloading:done verifying:done installing:failed restarting:pending health_check:pending health_wait:pending", 100, "disk full"},
		{"status of another version: not begun", withPackage("0.161.0", agent.PackageInstalled, 100, ""), "offered package_status offered:running " + allPending, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Derive(nil, target("in_progress"), tt.a, at(10))
			if got := shape(p); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
			if p.DownloadPercent != tt.percent || p.Error != tt.error {
				t.Errorf("downloadPercent %d error %q, want %d %q", p.DownloadPercent, p.Error, tt.percent, tt.error)
			}
		})
	}
}

func TestDerive_Executor(t *testing.T) {
	tests := []struct {
		executor string
		status   string
		want     string
	}{
		{ExecutorManual, "in_progress", "installing executor offered:done installing:running health_wait:pending"},
		{ExecutorWebhook, "in_progress", "installing executor offered:done installing:running health_wait:pending"},
		{ExecutorAWX, "verifying", "health_wait executor offered:done installing:done health_wait:running"},
		{ExecutorAWX, "failed", "failed executor offered:done installing:failed health_wait:pending"},            // the executor returned an error
		{ExecutorWebhook, "cancelled", "cancelled executor offered:done installing:skipped health_wait:pending"}, // superseded
		{ExecutorUpdater, "in_progress", "offered package_status offered:running " + allPending},                 // the updater is no external executor
		{"", "in_progress", "offered package_status offered:running " + allPending},                              // no executor named: the updater
	}
	for _, tt := range tests {
		t.Run(tt.executor+"/"+tt.status, func(t *testing.T) {
			f := target(tt.status)
			f.Executor = tt.executor
			if tt.status == "verifying" {
				f.VerifiedAt = tp(30)
			}
			// An updater component of the attempt is there, and an external executor ignores it.
			a := withPackage("", "", 0, "")
			if external(tt.executor) {
				a = withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0"))
			}
			if got := shape(Derive(nil, f, a, at(60))); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The target status has the last word over what the host shows.
func TestDerive_StatusLastWord(t *testing.T) {
	downloading := withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0"))
	checking := withUpdate(host("v0.162.0", "health_check", 5, "health_check:running:35:0"))
	tests := []struct {
		name string
		t    TargetFacts
		a    agent.Agent
		want string
	}{
		{"verifying: health_wait runs, earlier steps done", verified(target("verifying"), 40), downloading, "health_wait updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:running"},
		{"succeeded: every step done", finished(verified(target("succeeded"), 40), 100), downloading, "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
		{"succeeded without a host report", finished(verified(target("succeeded"), 40), 100), agent.Agent{}, "succeeded package_status offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
		{"cancelled: running steps skipped", finished(target("cancelled"), 30), downloading, "cancelled updater offered:done downloading:skipped verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"failed: running steps failed", finished(target("failed"), 30), downloading, "failed updater offered:done downloading:failed verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"failed in the health wait, updater idle", finished(verified(target("failed"), 40), 60), withUpdate(host("v0.162.0", "succeeded", 5, "health_check:done:35:38")), "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:failed"},
		{"skipped after it started: like cancelled", finished(target("skipped"), 30), downloading, "cancelled updater offered:done downloading:skipped verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{"failed while the updater checks: follows it", finished(verified(target("failed"), 40), 60), checking, "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:running health_wait:failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shape(Derive(nil, tt.t, tt.a, at(100))); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDerive_ErrorFallsBackToReason(t *testing.T) {
	f := finished(target("failed"), 300)
	f.Reason = "no success within applyTimeout"
	p := Derive(nil, f, withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0")), at(300))
	if p.Error != f.Reason {
		t.Errorf("error %q, want the target's reason", p.Error)
	}
	f.Reason = ""
	p = Derive(nil, f, withPackage("0.162.0", agent.PackageInstallFailed, 0, "disk full"), at(300))
	if p.Error != "disk full" {
		t.Errorf("error %q, want the host's error first", p.Error)
	}
}

func TestDerive_Absent(t *testing.T) {
	tests := []struct {
		name string
		t    TargetFacts
	}{
		{"pending", target("pending")},
		{"waiting_window", target("waiting_window")},
		{"never started", TargetFacts{Status: "skipped", Attempt: 1, ToVersion: "0.162.0"}},
	}
	prev := Derive(nil, finished(target("failed"), 30), agent.Agent{}, at(30))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Derive(prev, tt.t, agent.Agent{}, at(60)); got != nil {
				t.Errorf("got %s, want no progress", shape(got))
			}
		})
	}
}

func TestDerive_Freezing(t *testing.T) {
	downloading := withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0"))
	installing := withUpdate(host("v0.162.0", "installing", 5, "installing:running:22:0"))
	tests := []struct {
		name   string
		first  TargetFacts
		then   TargetFacts
		frozen bool
	}{
		{"succeeded stays", finished(verified(target("succeeded"), 40), 100), finished(verified(target("succeeded"), 40), 100), true},
		{"failed stays", finished(target("failed"), 30), finished(target("failed"), 30), true},
		{"cancelled stays", finished(target("cancelled"), 30), finished(target("cancelled"), 30), true},
		{"in_progress follows the host", target("in_progress"), target("in_progress"), false},
		{"a new final status is derived once more", finished(verified(target("succeeded"), 40), 100), rolledBack(finished(verified(target("rolled_back"), 40), 200), 150), false},
		{"a new attempt starts afresh", finished(target("failed"), 30), retried(target("in_progress")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := Derive(nil, tt.first, downloading, at(30))
			next := Derive(prev, tt.then, installing, at(400))
			if got := next == prev; got != tt.frozen {
				t.Errorf("frozen %v, want %v: %s then %s", got, tt.frozen, shape(prev), shape(next))
			}
		})
	}
}

func rolledBack(f TargetFacts, sec int) TargetFacts { f.RollbackAt = tp(sec); return f }
func retried(f TargetFacts) TargetFacts             { f.Attempt = 2; return f }

// UpdatedAt is when the content last changed: an unchanged tick returns prev.
func TestDerive_UnchangedKeepsPrev(t *testing.T) {
	a := withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0"))
	prev := Derive(nil, target("in_progress"), a, at(10))
	next := Derive(prev, target("in_progress"), a, at(20))
	if next != prev || !next.UpdatedAt.Equal(at(10)) {
		t.Errorf("an unchanged derivation made a new value updated at %s", next.UpdatedAt)
	}
	a.Package = agent.PackageStatus{Version: "0.162.0", Status: agent.PackageDownloading, DownloadPercent: 70}
	next = Derive(prev, target("in_progress"), a, at(20))
	if next == prev || !next.UpdatedAt.Equal(at(20)) || next.DownloadPercent != 70 {
		t.Errorf("a changed download was not derived: %+v", next)
	}
}

func TestDerive_FollowLimit(t *testing.T) {
	failed := finished(verified(target("failed"), 40), 60)
	checking := withUpdate(host("v0.162.0", "health_check", 5, "health_check:running:35:0"))
	rollingBack := withUpdate(host("v0.162.0", "rolling_back", 5, "health_check:failed:35:70", "rolling_back:running:70:0"))
	limit := 60 + int(FollowLimit/time.Second)
	tests := []struct {
		name      string
		a         agent.Agent
		now       int
		want      string
		following bool
	}{
		{"before the limit: follows", rollingBack, limit - 1, "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:running health_wait:failed", true},
		{"at the limit: ends, running steps fail", rollingBack, limit, "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:failed health_wait:failed", false},
		{"host began another attempt: ends with what it showed", withUpdate(host("v0.161.0", "downloading", 200, "downloading:running:200:0")), 200, "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed health_wait:failed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := Derive(nil, failed, checking, at(60))
			if !prev.Following() || !prev.FollowUntil.Equal(at(limit)) {
				t.Fatalf("follow until %v, want %s", prev.FollowUntil, at(limit))
			}
			next := Derive(prev, failed, tt.a, at(tt.now))
			if got := shape(next); got != tt.want || next.Following() != tt.following {
				t.Errorf("\n got %s following=%v\nwant %s following=%v", got, next.Following(), tt.want, tt.following)
			}
			if !tt.following && Derive(next, failed, checking, at(tt.now+1)) != next {
				t.Error("the progress was not frozen after the following ended")
			}
		})
	}
}

func TestDerive_NoFollowing(t *testing.T) {
	checking := withUpdate(host("v0.162.0", "health_check", 5, "health_check:running:35:0"))
	tests := []struct {
		name string
		t    TargetFacts
		a    agent.Agent
		now  time.Time
	}{
		{"updater not in health check or rollback", finished(target("failed"), 30), withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0")), at(30)},
		{"first derived after the limit", finished(verified(target("failed"), 40), 60), checking, at(60).Add(FollowLimit)},
		{"cancelled, not failed", finished(verified(target("cancelled"), 40), 60), checking, at(60)},
		{"package status only", finished(target("failed"), 30), withPackage("0.162.0", agent.PackageInstalling, 0, ""), at(30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Derive(nil, tt.t, tt.a, tt.now)
			if p.Following() {
				t.Errorf("follows until %s", p.FollowUntil)
			}
			for _, s := range p.Steps {
				if s.Status == StepRunning {
					t.Errorf("step %s still running: %s", s.Name, shape(p))
				}
			}
		})
	}
}

// A rollback of the rollout offers the previous version again at rollbackAt.
func TestDerive_RolloutRollback(t *testing.T) {
	installing := withUpdate(host("v0.162.0", "installing", 5, "installing:running:22:0"))
	back := withUpdate(host("v0.161.0", "downloading", 150, "downloading:running:150:0"))
	tests := []struct {
		name  string
		first TargetFacts
		then  TargetFacts
		want  string
	}{
		{"in_progress target rolling back", target("in_progress"), rolledBack(target("in_progress"), 150), "rolling_back updater offered:done downloading:done verifying:done installing:skipped restarting:pending health_check:pending rolling_back:running health_wait:pending"},
		{"in_progress target rolled back", target("in_progress"), finished(rolledBack(target("rolled_back"), 150), 200), "rolled_back updater offered:done downloading:done verifying:done installing:skipped restarting:pending health_check:pending rolling_back:done health_wait:skipped"},
		{"succeeded target rolled back", finished(verified(target("succeeded"), 40), 100), finished(rolledBack(verified(target("rolled_back"), 40), 150), 200), "rolled_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done rolling_back:done health_wait:done"},
		{"succeeded target while rolling back: frozen", finished(verified(target("succeeded"), 40), 100), finished(rolledBack(verified(target("succeeded"), 40), 150), 100), "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := Derive(nil, tt.first, installing, at(30))
			if got := shape(Derive(prev, tt.then, back, at(200))); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
