package simfleet

import (
	"testing"

	"github.com/open-telemetry/opamp-go/protobufs"
)

func TestDescription_Labels(t *testing.T) {
	attrs := func(d *protobufs.AgentDescription) map[string]string {
		out := map[string]string{}
		for _, kv := range d.GetNonIdentifyingAttributes() {
			out[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		return out
	}
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name      string
		fleet     string
		n         int
		wantFleet string // "" for absent
		wantWave  string
	}{
		{name: "canary", fleet: "edge", n: 3, wantFleet: "edge", wantWave: "canary"}, // agents 1..3 are canaries
		{name: "rest", fleet: "edge", n: 4, wantFleet: "edge", wantWave: ""},         // no labels.wave after them
		{name: "no fleet", fleet: "", n: 1, wantFleet: "", wantWave: "canary"},       // an empty Fleet leaves labels.fleet out
	} {
		cfg.Fleet = tc.fleet
		got := attrs(description(cfg, tc.n, "id", "0.161.0", nil))
		if got["labels.fleet"] != tc.wantFleet || got["labels.wave"] != tc.wantWave {
			t.Errorf("%s: labels %v", tc.name, got)
		}
		if _, ok := got["labels.fleet"]; ok != (tc.wantFleet != "") {
			t.Errorf("%s: labels.fleet present %v", tc.name, ok)
		}
	}
}

func TestUpdateComponent_Failure(t *testing.T) {
	u := &attempt{version: "0.162.0", from: "0.161.0", startedAt: t0, steps: map[string]step{}}
	u.begin(StepVerifying, t0)
	running := updateComponent(u)
	if !running.GetHealthy() || running.GetStatus() != StepVerifying || running.GetComponentHealthMap()["step:verifying"].GetStatus() != StepRunning {
		t.Errorf("running attempt %v", running)
	}
	u.finish(StepVerifying, t0.Add(hour), "bad signature")
	c := updateComponent(u)
	s := c.GetComponentHealthMap()["step:verifying"]
	if c.GetHealthy() || c.GetStatus() != AttemptFailed || c.GetLastError() != "bad signature" ||
		s.GetHealthy() || s.GetStatus() != StepFailed || s.GetLastError() != "bad signature" || s.GetStatusTimeUnixNano() != at(1) {
		t.Errorf("failed attempt %v", c)
	}
	if v := c.GetComponentHealthMap()["version"].GetStatus(); v != "v0.162.0" {
		t.Errorf("version child %q, want the offered version with one leading v", v)
	}
	if h := health(collectorHealth{healthy: true, status: StatusOK}, nil); h.GetComponentHealthMap() != nil {
		t.Error("the update component appears before any attempt")
	}
}

func TestPackageStatuses(t *testing.T) {
	for _, tc := range []struct {
		status       protobufs.PackageStatusEnum
		wantDownload bool
	}{
		{status: pkgDownloading, wantDownload: true}, // download details while downloading
		{status: pkgInstalling, wantDownload: false}, // not after
		{status: pkgInstalled, wantDownload: false},  // nor before
		{status: pkgInstallFailed, wantDownload: false},
	} {
		got := packageStatuses(pkgState{name: "", status: tc.status, downloadPercent: 100})
		if (got.GetPackages()[""].GetDownloadDetails() != nil) != tc.wantDownload {
			t.Errorf("%v: download details %v", tc.status, got.GetPackages()[""].GetDownloadDetails())
		}
		if got.GetServerProvidedAllPackagesHash() == nil {
			t.Errorf("%v: nil all-packages hash, which the client refuses", tc.status)
		}
	}
}
