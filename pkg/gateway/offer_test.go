package gateway

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/pkg/agent"
)

func TestWantsConfig(t *testing.T) {
	tests := []struct {
		name            string
		desired, report string
		sent            string
		want            bool
	}{
		{"new desired hash", "bb", "aa", "", true},           // the engine moved the agent on
		{"already reported", "bb", "bb", "", false},          // APPLIED, APPLYING or FAILED: the agent has it
		{"sent on this connection", "bb", "aa", "bb", false}, // no resend every poll
		{"sent an older one", "cc", "aa", "bb", true},        // superseded while in flight
		{"nothing desired", "", "aa", "", false},
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
		{"pending offer", "0.111.0", "0.110.0", agent.PackageStatus{Version: "0.110.0", Status: agent.PackageInstalled}, "", true},
		{"v-prefixed offer", "v0.111.0", "0.110.0", agent.PackageStatus{}, "", true},
		{"already running", "0.111.0", "0.111.0", agent.PackageStatus{}, "", false},                                                                  // success is the version report
		{"already running, v offer", "v0.111.0", "0.111.0", agent.PackageStatus{}, "", false},                                                        // versions compare normalized
		{"downloading it", "0.111.0", "0.110.0", agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading}, "", false},               // the agent works on it
		{"failed it", "0.111.0", "0.110.0", agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, "", false},                  // the engine decides what follows
		{"retry of a failed install", "0.111.0#2", "0.110.0", agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, "", true}, // retry-failed: a new attempt
		{"retry sent on this connection", "0.111.0#2", "0.110.0", agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed}, "0.111.0#2", false},
		{"retry already downloading", "0.111.0#2", "0.110.0", agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading}, "", false},
		{"sent on this connection", "0.111.0", "0.110.0", agent.PackageStatus{}, "0.111.0", false},
		{"no offer", "", "0.110.0", agent.PackageStatus{}, "", false},
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
		{"reports heartbeats", reports, 30 * time.Second, 30},
		{"supervisor", reports | accepts, 30 * time.Second, 0}, // would reconnect to an empty endpoint
		{"no heartbeats", 0, 30 * time.Second, 0},
		{"sub-second", reports, 500 * time.Millisecond, 0}, // OpAMP counts whole seconds
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
		{"Bearer new", true}, {"Bearer old", true}, {"bearer new", true}, // both during a rotation; scheme case-insensitive
		{"Bearer newer", false}, {"Bearer ne", false}, {"Bearer ", false}, // near misses
		{"Basic new", false}, {"new", false}, {"", false}, // other schemes, no scheme, none
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
