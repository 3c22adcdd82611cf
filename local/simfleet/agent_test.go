package simfleet

import (
	"testing"

	"github.com/open-telemetry/opamp-go/protobufs"
)

func TestTake_DropsWorkAlreadyDone(t *testing.T) {
	reported := &protobufs.RemoteConfigStatus{LastRemoteConfigHash: []byte("h1"), Status: applied}
	rc := func(hash string) *protobufs.AgentRemoteConfig {
		return &protobufs.AgentRemoteConfig{ConfigHash: []byte(hash)}
	}
	of := func(version, all string) *offer {
		return &offer{pkg: &protobufs.PackageAvailable{Version: version}, allHash: []byte(all)}
	}
	for _, tc := range []struct {
		name             string
		remote           *protobufs.RemoteConfigStatus
		config           *protobufs.AgentRemoteConfig
		offer            *offer
		wantConfig, want bool // config taken, offer taken
	}{
		{name: "new config", remote: reported, config: rc("h2"), offer: nil, wantConfig: true, want: false},                             // a hash not reported yet
		{name: "first config", remote: nil, config: rc("h1"), offer: nil, wantConfig: true, want: false},                                // nothing reported yet
		{name: "same config", remote: reported, config: rc("h1"), offer: nil, wantConfig: false, want: false},                           // APPLIED h1 already: resent, not redone
		{name: "new offer", remote: nil, config: nil, offer: of("0.162.0", "A2"), wantConfig: false, want: true},                        // another version, another offer
		{name: "offer of running version", remote: nil, config: nil, offer: of("v0.161.0", "A2"), wantConfig: false, want: false},       // runs it already
		{name: "offer handled", remote: nil, config: nil, offer: of("0.162.0", "A1"), wantConfig: false, want: false},                   // same all-packages hash as the last offer
		{name: "offer without hash", remote: nil, config: nil, offer: of("0.162.0", ""), wantConfig: false, want: true},                 // no hash to compare: by version only
		{name: "both", remote: reported, config: rc("h2"), offer: of("0.162.0", "A2"), wantConfig: true, want: true},                    // both queued, config first
		{name: "same config, new offer", remote: reported, config: rc("h1"), offer: of("0.162.0", "A2"), wantConfig: false, want: true}, // one dropped, one taken
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := DefaultConfig().normalize()
			a := newAgent(cfg, 1)
			a.remote, a.pendingConfig, a.pendingOffer = tc.remote, tc.config, tc.offer
			a.pkg.allPackagesHash = []byte("A1")
			gotConfig, gotOffer, _ := a.take()
			if (gotConfig != nil) != tc.wantConfig || (gotOffer != nil) != tc.want {
				t.Errorf("take: config %v, offer %v; want %v, %v", gotConfig != nil, gotOffer != nil, tc.wantConfig, tc.want)
			}
			if a.busy != (tc.wantConfig || tc.want) {
				t.Errorf("busy %v", a.busy)
			}
			if a.pendingConfig != nil || a.pendingOffer != nil {
				t.Error("pending work left after take")
			}
		})
	}
}

// With NoHealthReports an agent plays the opamp-go example agent: it
// declares no ReportsHealth and sends no health, but everything else.
func TestNoHealthReports_DeclaresAndSendsNoHealth(t *testing.T) {
	srv := newTestServer(t, true)
	cfg := DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Clock, cfg.Heartbeat = 1, srv.url, "sim-token", newFakeClock(), 0
	cfg.NoHealthReports = true
	f, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	uid := InstanceUID(cfg.Seed, 1)
	srv.wait(t, uid, "the first report", func(a *seen) bool { return a.attrs != nil && a.caps != 0 })
	a := srv.view(uid)
	const reportsHealth = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth)
	if a.caps&reportsHealth != 0 || a.health != nil {
		t.Errorf("capabilities %#x, health %v: want neither ReportsHealth nor a health report", a.caps, a.health)
	}
	if want := uint64(capabilities) &^ reportsHealth; a.caps != want {
		t.Errorf("capabilities %#x, want the others %#x", a.caps, want)
	}
}
