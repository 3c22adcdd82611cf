package gateway

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

func TestEffectiveOnline(t *testing.T) {
	const hb = 30 * time.Second
	tests := []struct {
		name     string
		online   bool
		lastSeen int // seconds
		now      int
		multiple int
		want     bool
	}{
		{"fresh", true, 0, 10, 3, true},                 // heard from 10 s ago
		{"at the limit", true, 0, 90, 3, true},          // exactly 3 heartbeats: still online
		{"past the limit", true, 0, 91, 3, false},       // the task holding it died
		{"closed", false, 0, 1, 3, false},               // offline is offline, however fresh
		{"multiple 2 past", true, 0, 61, 2, false},      // the multiple is honoured
		{"clock behind lastSeen", true, 10, 0, 3, true}, // a reader's clock a little behind
		{"never seen", true, -1_000_000, 0, 3, false},   // an item that only says online
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agent.Agent{Online: tt.online, LastSeen: at(tt.lastSeen)}
			if got := EffectiveOnline(a, at(tt.now), hb, tt.multiple); got != tt.want {
				t.Errorf("EffectiveOnline = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLastSeenEvery(t *testing.T) {
	tests := []struct {
		heartbeat time.Duration
		multiple  int
		want      time.Duration
	}{
		{30 * time.Second, 3, 45 * time.Second},  // every second idle heartbeat writes
		{30 * time.Second, 2, 15 * time.Second},  // every idle heartbeat writes
		{30 * time.Second, 5, 105 * time.Second}, // every fourth
		{30 * time.Second, 1, 0},                 // no room: every report writes
	}
	for _, tt := range tests {
		got := LastSeenEvery(tt.heartbeat, tt.multiple)
		if got != tt.want {
			t.Errorf("LastSeenEvery(%v, %d) = %v, want %v", tt.heartbeat, tt.multiple, got, tt.want)
		}
		// The written lastSeen is at most every+heartbeat old while the agent
		// reports: that must stay within the liveness limit.
		if limit := time.Duration(tt.multiple) * tt.heartbeat; tt.multiple > 1 && got+tt.heartbeat > limit {
			t.Errorf("LastSeenEvery(%v, %d) = %v lets a live agent look offline", tt.heartbeat, tt.multiple, got)
		}
	}
}

func TestSameFacts(t *testing.T) {
	base := agent.Agent{ID: id1, Attributes: map[string]string{"a": "1"}, Online: true, ConnectedAt: at(0), LastSeen: at(0),
		Health: agent.Health{Healthy: true, ReportedAt: at(0)}, ServiceVersion: "1.0", VersionSince: at(0),
		Update: &agent.UpdateComponent{Status: "done", Steps: map[string]agent.UpdateStep{"step:offered": {Status: "done"}}}}
	tests := []struct {
		name   string
		change func(*agent.Agent)
		want   bool
	}{
		{"identical", func(*agent.Agent) {}, true},
		{"lastSeen only", func(a *agent.Agent) { a.LastSeen = at(30) }, true},                                      // coalesced, not a fact
		{"desired state", func(a *agent.Agent) { a.DesiredHash, a.PackageOffer, a.Fleet = "h", "2.0", "f" }, true}, // not the gateway's
		{"same instant other zone", func(a *agent.Agent) { a.ConnectedAt = at(0).In(time.FixedZone("X", 3600)) }, true},
		{"attribute", func(a *agent.Agent) { a.Attributes = map[string]string{"a": "2"} }, false},
		{"online", func(a *agent.Agent) { a.Online = false }, false},
		{"reconnected", func(a *agent.Agent) { a.ConnectedAt = at(5) }, false},
		{"health", func(a *agent.Agent) { a.Health.Status = "StatusOK" }, false},
		{"health date", func(a *agent.Agent) { a.Health.ReportedAt = at(5) }, false},
		{"components", func(a *agent.Agent) {
			a.Health.Components = &agent.ComponentSummary{Total: 3, UnhealthyCount: 1, Unhealthy: []string{"exporter:otlp"}}
		}, false},
		{"version", func(a *agent.Agent) { a.ServiceVersion = "1.1" }, false},
		{"config", func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigApplied }, false},
		{"package", func(a *agent.Agent) { a.Package.DownloadPercent = 5 }, false},
		{"update gone", func(a *agent.Agent) { a.Update = nil }, false},
		{"update step", func(a *agent.Agent) {
			a.Update = &agent.UpdateComponent{Status: "done", Steps: map[string]agent.UpdateStep{"step:offered": {Status: "failed"}}}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base
			tt.change(&b)
			if got := sameFacts(base, b); got != tt.want {
				t.Errorf("sameFacts = %v, want %v", got, tt.want)
			}
		})
	}
	// Summaries compare by value, and no names is no names, as the store sees it.
	withComponents := func(names []string) agent.Agent {
		a := base
		a.Health.Components = &agent.ComponentSummary{Total: 2, Unhealthy: names}
		return a
	}
	if !sameFacts(withComponents(nil), withComponents([]string{})) {
		t.Error("an empty list of unhealthy names differs from none")
	}
	if !sameFacts(withComponents([]string{"a"}), withComponents([]string{"a"})) {
		t.Error("equal summaries differ")
	}
}
