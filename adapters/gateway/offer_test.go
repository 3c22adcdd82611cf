package gateway

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

func TestWantsConfig(t *testing.T) {
	tests := []struct {
		name            string
		desired, report string
		sent            string
		want            bool
	}{
		{name: "new desired hash", desired: "bb", report: "aa", sent: "", want: true},           // the engine moved the agent on
		{name: "already reported", desired: "bb", report: "bb", sent: "", want: false},          // APPLIED, APPLYING or FAILED: the agent has it
		{name: "sent on this connection", desired: "bb", report: "aa", sent: "bb", want: false}, // no resend every poll
		{name: "sent an older one", desired: "cc", report: "aa", sent: "bb", want: true},        // superseded while in flight
		{name: "nothing desired", desired: "", report: "aa", sent: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agent.Agent{DesiredHash: tt.desired, RemoteConfig: agent.RemoteConfigStatus{Hash: tt.report}}
			if got := wantsConfig(a, tt.sent); got != tt.want {
				t.Errorf("wantsConfig = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWantsOffer(t *testing.T) {
	tests := []struct {
		name    string
		offer   string
		running string
		pkg     agent.PackageStatus
		sent    string
		want    bool
	}{
		{name: "pending offer", offer: "0.111.0", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.110.0", Status: agent.PackageInstalled}, sent: "", want: true},
		{name: "v-prefixed offer", offer: "v0.111.0", running: "0.110.0", pkg: agent.PackageStatus{}, sent: "", want: true},
		{name: "already running", offer: "0.111.0", running: "0.111.0", pkg: agent.PackageStatus{}, sent: "", want: false},                                                                  // success is the version report
		{name: "already running, v offer", offer: "v0.111.0", running: "0.111.0", pkg: agent.PackageStatus{}, sent: "", want: false},                                                        // versions compare normalized
		{name: "downloading it", offer: "0.111.0", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading}, sent: "", want: false},               // the agent works on it
		{name: "failed it", offer: "0.111.0", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, sent: "", want: false},                  // the engine decides what follows
		{name: "retry of a failed install", offer: "0.111.0#2", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, sent: "", want: true}, // retry-failed: a new attempt
		{name: "retry sent on this connection", offer: "0.111.0#2", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, sent: "0.111.0#2", want: false},
		{name: "retry already downloading", offer: "0.111.0#2", running: "0.110.0", pkg: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading}, sent: "", want: false},
		{name: "sent on this connection", offer: "0.111.0", running: "0.110.0", pkg: agent.PackageStatus{}, sent: "0.111.0", want: false},
		{name: "no offer", offer: "", running: "0.110.0", pkg: agent.PackageStatus{}, sent: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agent.Agent{PackageOffer: tt.offer, ServiceVersion: tt.running, Package: tt.pkg}
			if got := wantsOffer(a, tt.sent); got != tt.want {
				t.Errorf("wantsOffer = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRemoteConfigFor(t *testing.T) {
	rc, err := remoteConfigFor("abcd01", []byte("receivers: {}"), "text/yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rc.ConfigHash, hashA) || string(rc.Config.ConfigMap[""].Body) != "receivers: {}" || rc.Config.ConfigMap[""].ContentType != "text/yaml" {
		t.Errorf("remote config = %v", rc)
	}
	// The hash the agent reports back translates to the desired hash again.
	back, _ := Translate(agent.Agent{}, msg(withRemoteConfig(rc.ConfigHash, applied, "")), at(0), "")
	if back.RemoteConfig.Hash != "abcd01" {
		t.Errorf("round trip hash = %q", back.RemoteConfig.Hash)
	}
	for _, bad := range []string{"", "xyz", "abc"} {
		if _, err := remoteConfigFor(bad, nil, ""); err == nil {
			t.Errorf("remoteConfigFor(%q) accepted a hash that is not hex", bad)
		}
	}
}

func TestPackagesFor(t *testing.T) {
	a := packagesFor("", "0.111.0", DefaultDownloadURL)
	p := a.Packages[""]
	if p == nil || p.Version != "0.111.0" || p.Type != protobufs.PackageType_PackageType_TopLevel ||
		p.File.DownloadUrl != "https://example.invalid/otelcol/0.111.0" {
		t.Fatalf("offer = %v", a)
	}
	if r := packagesFor("", "0.111.0#2", DefaultDownloadURL).Packages[""]; r.Version != "0.111.0" || r.File.DownloadUrl != p.File.DownloadUrl {
		t.Errorf("a retry offers %v, want the same version and URL", r)
	}
	if b := packagesFor("", "0.111.0", DefaultDownloadURL); !bytes.Equal(a.AllPackagesHash, b.AllPackagesHash) || !bytes.Equal(p.Hash, b.Packages[""].Hash) {
		t.Error("the same offer hashes differently: tasks would disagree")
	}
	for _, other := range []*protobufs.PackagesAvailable{
		packagesFor("", "0.112.0", DefaultDownloadURL),                 // other version
		packagesFor("", "0.111.0", "https://mirror.example/{version}"), // other URL
		packagesFor("otelcol", "0.111.0", DefaultDownloadURL),          // other package
		packagesFor("", "0.111.0#2", DefaultDownloadURL),               // a retry: a new offer
	} {
		if bytes.Equal(a.AllPackagesHash, other.AllPackagesHash) {
			t.Errorf("offer %v hashes like %v", other, a)
		}
	}
}

func TestHeartbeatFor(t *testing.T) {
	const reports = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat)
	const accepts = uint64(protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings)
	tests := []struct {
		name     string
		caps     uint64
		interval time.Duration
		want     uint64 // seconds; 0 = no offer
	}{
		{name: "reports heartbeats", caps: reports, interval: 30 * time.Second, want: 30},
		{name: "supervisor", caps: reports | accepts, interval: 30 * time.Second, want: 0}, // would reconnect to an empty endpoint
		{name: "no heartbeats", caps: 0, interval: 30 * time.Second, want: 0},
		{name: "sub-second", caps: reports, interval: 500 * time.Millisecond, want: 0}, // OpAMP counts whole seconds
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := heartbeatFor(tt.caps, tt.interval).GetOpamp().GetHeartbeatIntervalSeconds()
			if got != tt.want {
				t.Errorf("heartbeat offer = %d s, want %d s", got, tt.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	g := &Gateway{}
	if err := g.SetTokens([]string{" old ", "new", ""}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		header string
		want   bool
	}{
		{header: "Bearer new", want: true}, {header: "Bearer old", want: true}, {header: "bearer new", want: true}, // both during a rotation; scheme case-insensitive
		{header: "Bearer newer", want: false}, {header: "Bearer ne", want: false}, {header: "Bearer ", want: false}, // near misses
		{header: "Basic new", want: false}, {header: "new", want: false}, {header: "", want: false}, // other schemes, no scheme, none
	}
	for _, tt := range tests {
		r, _ := http.NewRequest(http.MethodGet, "/v1/opamp", nil)
		r.Header.Set("Authorization", tt.header)
		if got := g.tokens.Load().valid(bearer(r)); got != tt.want {
			t.Errorf("token %q valid = %v, want %v", tt.header, got, tt.want)
		}
	}
	if err := g.SetTokens([]string{" ", ""}); err == nil {
		t.Error("SetTokens accepted a set without a token")
	}
}
