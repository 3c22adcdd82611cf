package simfleet

import (
	"crypto/sha256"
	"maps"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// offerMsg offers the collector package (top-level, name "") of a version.
func offerMsg(version string) *protobufs.ServerToAgent {
	sum := sha256.Sum256([]byte("package " + version))
	return &protobufs.ServerToAgent{PackagesAvailable: &protobufs.PackagesAvailable{
		Packages: map[string]*protobufs.PackageAvailable{"": {
			Type: protobufs.PackageType_PackageType_TopLevel, Version: version, Hash: sum[:],
			File: &protobufs.DownloadableFile{DownloadUrl: "https://example.invalid/otelcol/" + version},
		}},
		AllPackagesHash: sum[:],
	}}
}

// at is the fake time after k steps.
func at(k int) uint64 { return uint64(t0.Add(time.Duration(k) * hour).UnixNano()) }

// A package offer runs the updater's steps, one per clock step, and ends with
// the collector restarted on the new version.
func TestFleet_UpdatesOnPackageOffer(t *testing.T) {
	h := start(t, 1, nil)
	uid := h.uid(1)
	h.srv.send(t, uid, offerMsg("0.162.0"))
	for range 8 {
		h.step(t, 1)
	}
	h.srv.wait(t, uid, "the update to succeed", func(a *seen) bool { return len(a.updateLog) > 0 && a.updateLog[len(a.updateLog)-1] == AttemptSucceeded })
	h.settle(t, 1)

	got := h.srv.view(uid)
	assertLog(t, "update", got.updateLog, []string{"offered", "downloading", "verifying", "installing", "restarting", "health_check", "succeeded"})
	assertLog(t, "package", got.pkgLog, []string{
		"Installed has 0.161.0 offered ",
		"InstallPending has 0.161.0 offered 0.162.0",
		"Downloading has 0.161.0 offered 0.162.0 0%",
		"Downloading has 0.161.0 offered 0.162.0 50%",
		"Downloading has 0.161.0 offered 0.162.0 100%",
		"Installing has 0.161.0 offered 0.162.0",
		"Installed has 0.162.0 offered 0.162.0",
	})
	assertLog(t, "health", got.healthLog, []string{"healthy StatusOK", "unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"})
	// The new version arrives with or after the new process's start-up report.
	assertLog(t, "service.version", got.versionLog, []string{"0.161.0 with healthy StatusOK", "0.162.0 with unhealthy "})
	if got.health.GetStartTimeUnixNano() != at(5) {
		t.Errorf("process start %d, want the restart at step 5", got.health.GetStartTimeUnixNano())
	}

	u := got.health.GetComponentHealthMap()[UpdateComponent]
	if !u.GetHealthy() || u.GetStartTimeUnixNano() != at(0) || u.GetStatusTimeUnixNano() != at(8) {
		t.Errorf("update component %v", u)
	}
	want := map[string]string{"version": "v0.162.0", "from": "v0.161.0"}
	for name, span := range map[string][2]int{
		"offered": {0, 1}, "downloading": {1, 3}, "verifying": {3, 4}, "installing": {4, 5}, "restarting": {5, 7}, "health_check": {7, 8},
	} {
		want["step:"+name] = StepDone
		s := u.GetComponentHealthMap()["step:"+name]
		if s.GetStartTimeUnixNano() != at(span[0]) || s.GetStatusTimeUnixNano() != at(span[1]) {
			t.Errorf("step:%s from %d to %d, want steps %v", name, s.GetStartTimeUnixNano(), s.GetStatusTimeUnixNano(), span)
		}
	}
	children := map[string]string{}
	for name, c := range u.GetComponentHealthMap() {
		children[name] = c.GetStatus()
	}
	if !maps.Equal(children, want) {
		t.Errorf("children\n got %v\nwant %v", children, want)
	}
	h.waitFleet(t, "idle", func(s []AgentState) bool { return !s[0].Busy })
	if s := h.fleet.Snapshot()[0]; s.Version != "0.162.0" || s.Update != AttemptSucceeded || s.UpdateVersion != "0.162.0" {
		t.Errorf("snapshot %+v", s)
	}
}

// A failing agent cannot install a version of FailVersions: verifying fails,
// the package status is INSTALL_FAILED and the collector keeps its version.
func TestFleet_FailsUpdateToFailVersion(t *testing.T) {
	h := start(t, 1, func(c *Config) { c.FailAgents, c.FailVersions = []int{1}, []string{"v0.162.0"} })
	uid := h.uid(1)
	h.srv.send(t, uid, offerMsg("0.162.0"))
	for range 4 {
		h.step(t, 1)
	}
	h.srv.wait(t, uid, "the update to fail", func(a *seen) bool { return len(a.updateLog) > 0 && a.updateLog[len(a.updateLog)-1] == AttemptFailed })
	h.settle(t, 1) // the package status may follow the health in a message of its own

	got := h.srv.view(uid)
	assertLog(t, "update", got.updateLog, []string{"offered", "downloading", "verifying", "failed"})
	p := got.pkgs.GetPackages()[""]
	if p.GetStatus() != pkgInstallFailed || p.GetAgentHasVersion() != "0.161.0" || p.GetErrorMessage() == "" {
		t.Errorf("package status %v", p)
	}
	u := got.health.GetComponentHealthMap()[UpdateComponent]
	v := u.GetComponentHealthMap()["step:verifying"]
	if u.GetHealthy() || u.GetLastError() != p.GetErrorMessage() || v.GetStatus() != StepFailed || v.GetLastError() != p.GetErrorMessage() || v.GetStatusTimeUnixNano() != at(4) {
		t.Errorf("update component %v", u)
	}
	if _, ok := u.GetComponentHealthMap()["step:installing"]; ok {
		t.Error("a step after the failed one was reported")
	}
	assertLog(t, "service.version", got.versionLog, []string{"0.161.0 with healthy StatusOK"})
	assertLog(t, "health", got.healthLog, []string{"healthy StatusOK"}) // the collector was never restarted
}

// Install changes the version from outside OpAMP: the collector restarts
// into it and the package status reports it installed, without an update
// component (no updater ran).
func TestFleet_InstallFromOutside(t *testing.T) {
	h := start(t, 2, nil)
	uid := h.uid(1)
	if err := h.fleet.Install("sim-01", "v0.162.0"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the Starting and Started delays of the restart
		h.step(t, 1)
	}
	h.srv.wait(t, uid, "the new version, healthy", func(a *seen) bool {
		return a.attrs["service.version"] == "0.162.0" && a.health.GetStatus() == StatusOK
	})
	h.settle(t, 1)
	got := h.srv.view(uid)
	assertLog(t, "service.version", got.versionLog, []string{"0.161.0 with healthy StatusOK", "0.162.0 with unhealthy "})
	assertLog(t, "health", got.healthLog, []string{"healthy StatusOK", "unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"})
	if p := got.pkgs.GetPackages()[""]; p.GetStatus() != pkgInstalled || p.GetAgentHasVersion() != "0.162.0" {
		t.Errorf("package status %v", p)
	}
	if _, ok := got.health.GetComponentHealthMap()[UpdateComponent]; ok {
		t.Error("an update component without an updater")
	}
	h.waitFleet(t, "idle", func(s []AgentState) bool { return !s[0].Busy })
	if s := h.fleet.Snapshot(); s[0].Version != "0.162.0" || s[1].Version != "0.161.0" || s[0].Update != "" {
		t.Errorf("snapshot %+v", s)
	}
	// The version it runs is left alone; an unknown host is an error.
	if err := h.fleet.Install("sim-01", "0.162.0"); err != nil {
		t.Fatal(err)
	}
	h.waitFleet(t, "idle", func(s []AgentState) bool { return !s[0].Busy })
	if n := len(h.srv.view(uid).healthLog); n != 4 {
		t.Errorf("health log %v: no restart for the version it runs", h.srv.view(uid).healthLog)
	}
	if err := h.fleet.Install("sim-99", "0.162.0"); err == nil {
		t.Error("an unknown host must be an error")
	}
}
