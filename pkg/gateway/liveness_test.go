package gateway

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

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
		{"lastSeen only", func(a *agent.Agent) { a.LastSeen = at(30) }, true}, // moves with facts, not one
		{"task", func(a *agent.Agent) { a.Task = "other" }, false},
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

// Run sweeps for silent sessions every tenth of the liveness timeout, and
// never more often than it polls.
func TestSweepEvery(t *testing.T) {
	tests := []struct {
		name         string
		heartbeat    time.Duration
		offlineAfter int
		poll         time.Duration
		want         time.Duration
	}{
		{name: "defaults", heartbeat: 30 * time.Second, offlineAfter: 3, poll: time.Second, want: 9 * time.Second},   // 90 s / 10
		{name: "short heartbeat", heartbeat: 2 * time.Second, offlineAfter: 3, poll: time.Second, want: time.Second}, // 0.6 s: the poll's
		{name: "slow poll", heartbeat: 30 * time.Second, offlineAfter: 3, poll: 15 * time.Second, want: 15 * time.Second},
		{name: "patient", heartbeat: time.Minute, offlineAfter: 5, poll: time.Second, want: 30 * time.Second}, // 300 s / 10
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{"t"},
				Heartbeat: tt.heartbeat, OfflineAfter: tt.offlineAfter, PollInterval: tt.poll}, newMemAgents(), memConfigs{})
			if err != nil {
				t.Fatal(err)
			}
			if got := g.SweepEvery(); got != tt.want {
				t.Errorf("SweepEvery %v, want %v", got, tt.want)
			}
		})
	}
}
