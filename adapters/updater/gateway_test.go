package updater_test

// An external test package: the gateway may come to import this package,
// and the round trip through its parser must still compile.

import (
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/adapters/updater"
	"github.com/myriarch/myriarch/core/agent"
)

// The reports read through the server's own parser as the attempt and the
// package status they are.
func TestReport_ThroughTheGatewaysParser(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const sha = "archive not verified: SHA-256 differs"
	a := &updater.Attempt{
		Offer:  updater.Offer{Package: "collector", Version: "0.150.0"},
		From:   "0.149.0",
		Status: updater.Failed, StartedAt: t0, StatusTime: at(6), LastError: sha,
		Steps: map[updater.Step]updater.StepState{
			updater.StepOffered:     {Status: updater.StepDone, StartedAt: at(0), StatusTime: at(1)},
			updater.StepDownloading: {Status: updater.StepDone, StartedAt: at(1), StatusTime: at(5)},
			updater.StepVerifying:   {Status: updater.StepFailed, StartedAt: at(5), StatusTime: at(6), LastError: sha},
		},
	}
	r := updater.Report{Attempt: a, Package: updater.PackageReport{
		Name: "collector", HasVersion: "0.149.0", OfferedVersion: "0.150.0", OfferedHash: []byte{8},
		Status: updater.PackageInstallFailed, Error: sha, AllPackagesHash: []byte{9},
	}}

	msg := &protobufs.AgentToServer{
		InstanceUid:     make([]byte, 16),
		Health:          r.Health(t0.Add(-time.Hour)),
		PackageStatuses: r.PackageStatuses(),
	}
	got, err := gateway.Translate(agent.Agent{}, msg, at(7), "collector")
	if err != nil {
		t.Fatal(err)
	}
	u := got.Update
	if u == nil || u.Status != updater.Failed || u.Version != "v0.150.0" || u.From != "v0.149.0" || !u.StartedAt.Equal(t0) {
		t.Fatalf("update %+v", u)
	}
	want := map[string]agent.UpdateStep{
		"step:offered":     {Status: "done", StartedAt: at(0), StatusTime: at(1)},
		"step:downloading": {Status: "done", StartedAt: at(1), StatusTime: at(5)},
		"step:verifying":   {Status: "failed", StartedAt: at(5), StatusTime: at(6), LastError: sha},
	}
	if len(u.Steps) != len(want) {
		t.Errorf("steps %v", u.Steps)
	}
	for name, w := range want {
		s := u.Steps[name]
		if s.Status != w.Status || !s.StartedAt.Equal(w.StartedAt) || !s.StatusTime.Equal(w.StatusTime) || s.LastError != w.LastError {
			t.Errorf("%s = %+v, want %+v", name, s, w)
		}
	}
	if !got.Health.Healthy || got.Health.Status != "StatusOK" || got.Health.Components != nil {
		t.Errorf("health %+v: the updater is healthy, its attempt is no component of a collector", got.Health)
	}
	p := got.Package
	if p.Status != agent.PackageInstallFailed || p.Version != "0.150.0" || p.Error != sha {
		t.Errorf("package %+v", p)
	}
	if ps := msg.PackageStatuses; string(ps.ServerProvidedAllPackagesHash) != "\x09" || string(ps.Packages["collector"].ServerOfferedHash) != "\x08" {
		t.Errorf("hashes %v", ps)
	}
}
