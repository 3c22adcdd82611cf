package progress

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

const allPending = "downloading:pending verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"

func TestDerive_AttemptMatching(t *testing.T) {
	tests := []struct {
		name    string
		version string
		began   int // seconds relative to the target's start
		want    string
	}{
		{name: "same version, began after the target", version: "v0.162.0", began: 5, want: "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "began 1 minute before the target", version: "v0.162.0", began: -60, want: "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "began exactly 2 minutes before", version: "v0.162.0", began: -120, want: "downloading updater offered:done downloading:running " + "verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "began 3 minutes before: an older attempt", version: "v0.162.0", began: -180, want: "offered updater offered:running " + allPending},
		{name: "began 2 minutes and 1 second before", version: "v0.162.0", began: -121, want: "offered updater offered:running " + allPending},
		{name: "another version", version: "v0.161.0", began: 5, want: "offered updater offered:running " + allPending},
		{name: "version without the leading v", version: "0.162.0", began: 5, want: "offered updater offered:running " + allPending},
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
		{name: "missed reports: steps before the reached one are done", u: host("v0.162.0", "installing", 5, "installing:running:22:0"), want: "installing updater offered:done downloading:done verifying:done installing:running " + "restarting:pending health_check:pending health_wait:pending", error: ""},
		{name: "keys without the step: prefix", u: &agent.UpdateComponent{Status: "downloading", Version: "v0.162.0", StartedAt: at(5), Steps: map[string]agent.UpdateStep{"downloading": {Status: "running", StartedAt: at(5)}}}, want: "downloading updater offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", error: ""},
		{name: "a skipped step stays skipped", u: host("v0.162.0", "installing", 5, "downloading:done:5:20", "verifying:skipped:20:20", "installing:running:20:0"), want: "installing updater offered:done downloading:done verifying:skipped installing:running " + "restarting:pending health_check:pending health_wait:pending", error: ""},
		{name: "a failed step fails the phase with its error", u: host("v0.162.0", "failed", 5, "downloading:failed:5:9"), want: "failed updater offered:done downloading:failed verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", error: "downloading failed"},
		{name: "updater done, version not reported yet", u: host("v0.162.0", "succeeded", 5, "health_check:done:35:50"), want: "health_check updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:pending", error: ""},
		{name: "host rollback running while in_progress", u: host("v0.162.0", "rolling_back", 5, "health_check:failed:35:40", "rolling_back:running:40:0"), want: "rolling_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:running health_wait:pending", error: "health_check failed"},
		{name: "host rollback ended while in_progress", u: host("v0.162.0", "rolled_back", 5, "health_check:failed:35:40", "rolling_back:done:40:50"), want: "rolled_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:done health_wait:skipped", error: "health_check failed"},
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
		{name: "nothing reported", a: agent.Agent{}, want: "offered package_status offered:running " + allPending, percent: 0, error: ""},
		{name: "INSTALL_PENDING", a: withPackage("0.162.0", agent.PackageInstallPending, 0, ""), want: "offered package_status offered:running " + allPending, percent: 0, error: ""},
		{name: "DOWNLOADING", a: withPackage("0.162.0", agent.PackageDownloading, 40, ""), want: "downloading package_status offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", percent: 40, error: ""},
		{name: "DOWNLOADING above 100 is clamped", a: withPackage("0.162.0", agent.PackageDownloading, 140, ""), want: "downloading package_status offered:done downloading:running verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending", percent: 100, error: ""},
		{name: "INSTALLING", a: withPackage("v0.162.0", agent.PackageInstalling, 100, ""), want: "installing package_status offered:done downloading:done verifying:done installing:running restarting:pending health_check:pending health_wait:pending", percent: 100, error: ""},
		{name: "INSTALLED: the collector restarts", a: withPackage("0.162.0", agent.PackageInstalled, 100, ""), want: "restarting package_status offered:done downloading:done verifying:done installing:done restarting:running health_check:pending health_wait:pending", percent: 100, error: ""},
		{name: "INSTALL_FAILED", a: withPackage("0.162.0", agent.PackageInstallFailed, 100, "disk full"), want: "failed package_status offered:done downloading:done verifying:done installing:failed restarting:pending health_check:pending health_wait:pending", percent: 100, error: "disk full"},
		{name: "status of another version: not begun", a: withPackage("0.161.0", agent.PackageInstalled, 100, ""), want: "offered package_status offered:running " + allPending, percent: 0, error: ""},
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
		{executor: ExecutorManual, status: "in_progress", want: "installing executor offered:done installing:running health_wait:pending"},
		{executor: ExecutorWebhook, status: "in_progress", want: "installing executor offered:done installing:running health_wait:pending"},
		{executor: ExecutorAWX, status: "verifying", want: "health_wait executor offered:done installing:done health_wait:running"},
		{executor: ExecutorAWX, status: "failed", want: "failed executor offered:done installing:failed health_wait:pending"},            // the executor returned an error
		{executor: ExecutorWebhook, status: "cancelled", want: "cancelled executor offered:done installing:skipped health_wait:pending"}, // superseded
		{executor: ExecutorUpdater, status: "in_progress", want: "offered package_status offered:running " + allPending},                 // the updater is no external executor
		{executor: "", status: "in_progress", want: "offered package_status offered:running " + allPending},                              // no executor named: the updater
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
		{name: "verifying: health_wait runs, earlier steps done", t: verified(target("verifying"), 40), a: downloading, want: "health_wait updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:running"},
		{name: "succeeded: every step done", t: finished(verified(target("succeeded"), 40), 100), a: downloading, want: "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
		{name: "succeeded without a host report", t: finished(verified(target("succeeded"), 40), 100), a: agent.Agent{}, want: "succeeded package_status offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
		{name: "cancelled: running steps skipped", t: finished(target("cancelled"), 30), a: downloading, want: "cancelled updater offered:done downloading:skipped verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "failed: running steps failed", t: finished(target("failed"), 30), a: downloading, want: "failed updater offered:done downloading:failed verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "failed in the health wait, updater idle", t: finished(verified(target("failed"), 40), 60), a: withUpdate(host("v0.162.0", "succeeded", 5, "health_check:done:35:38")), want: "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:failed"},
		{name: "skipped after it started: like cancelled", t: finished(target("skipped"), 30), a: downloading, want: "cancelled updater offered:done downloading:skipped verifying:pending installing:pending restarting:pending health_check:pending health_wait:pending"},
		{name: "failed while the updater checks: follows it", t: finished(verified(target("failed"), 40), 60), a: checking, want: "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:running health_wait:failed"},
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
		{name: "pending", t: target("pending")},
		{name: "waiting_window", t: target("waiting_window")},
		{name: "never started", t: TargetFacts{Status: "skipped", Attempt: 1, ToVersion: "0.162.0"}},
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
		{name: "succeeded stays", first: finished(verified(target("succeeded"), 40), 100), then: finished(verified(target("succeeded"), 40), 100), frozen: true},
		{name: "failed stays", first: finished(target("failed"), 30), then: finished(target("failed"), 30), frozen: true},
		{name: "cancelled stays", first: finished(target("cancelled"), 30), then: finished(target("cancelled"), 30), frozen: true},
		{name: "in_progress follows the host", first: target("in_progress"), then: target("in_progress"), frozen: false},
		{name: "a new final status is derived once more", first: finished(verified(target("succeeded"), 40), 100), then: rolledBack(finished(verified(target("rolled_back"), 40), 200), 150), frozen: false},
		{name: "a new attempt starts afresh", first: finished(target("failed"), 30), then: retried(target("in_progress")), frozen: false},
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
		{name: "before the limit: follows", a: rollingBack, now: limit - 1, want: "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:running health_wait:failed", following: true},
		{name: "at the limit: ends, running steps fail", a: rollingBack, now: limit, want: "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed rolling_back:failed health_wait:failed", following: false},
		{name: "host began another attempt: ends with what it showed", a: withUpdate(host("v0.161.0", "downloading", 200, "downloading:running:200:0")), now: 200, want: "failed updater offered:done downloading:done verifying:done installing:done restarting:done health_check:failed health_wait:failed", following: false},
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
		{name: "updater not in health check or rollback", t: finished(target("failed"), 30), a: withUpdate(host("v0.162.0", "downloading", 5, "downloading:running:5:0")), now: at(30)},
		{name: "first derived after the limit", t: finished(verified(target("failed"), 40), 60), a: checking, now: at(60).Add(FollowLimit)},
		{name: "cancelled, not failed", t: finished(verified(target("cancelled"), 40), 60), a: checking, now: at(60)},
		{name: "package status only", t: finished(target("failed"), 30), a: withPackage("0.162.0", agent.PackageInstalling, 0, ""), now: at(30)},
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
		{name: "in_progress target rolling back", first: target("in_progress"), then: rolledBack(target("in_progress"), 150), want: "rolling_back updater offered:done downloading:done verifying:done installing:skipped restarting:pending health_check:pending rolling_back:running health_wait:pending"},
		{name: "in_progress target rolled back", first: target("in_progress"), then: finished(rolledBack(target("rolled_back"), 150), 200), want: "rolled_back updater offered:done downloading:done verifying:done installing:skipped restarting:pending health_check:pending rolling_back:done health_wait:skipped"},
		{name: "succeeded target rolled back", first: finished(verified(target("succeeded"), 40), 100), then: finished(rolledBack(verified(target("rolled_back"), 40), 150), 200), want: "rolled_back updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done rolling_back:done health_wait:done"},
		{name: "succeeded target while rolling back: frozen", first: finished(verified(target("succeeded"), 40), 100), then: finished(rolledBack(verified(target("succeeded"), 40), 150), 100), want: "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done"},
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
