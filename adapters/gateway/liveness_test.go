package gateway

import (
	"bytes"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
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
		{name: "identical", change: func(*agent.Agent) {}, want: true},
		{name: "lastSeen only", change: func(a *agent.Agent) { a.LastSeen = at(30) }, want: true}, // moves with facts, not one
		{name: "task", change: func(a *agent.Agent) { a.Task = "other" }, want: false},
		{name: "desired state", change: func(a *agent.Agent) { a.DesiredHash, a.PackageOffer, a.Fleet = "h", "2.0", "f" }, want: true}, // not the gateway's
		{name: "same instant other zone", change: func(a *agent.Agent) { a.ConnectedAt = at(0).In(time.FixedZone("X", 3600)) }, want: true},
		{name: "attribute", change: func(a *agent.Agent) { a.Attributes = map[string]string{"a": "2"} }, want: false},
		{name: "online", change: func(a *agent.Agent) { a.Online = false }, want: false},
		{name: "reconnected", change: func(a *agent.Agent) { a.ConnectedAt = at(5) }, want: false},
		{name: "health", change: func(a *agent.Agent) { a.Health.Status = "StatusOK" }, want: false},
		{name: "health date", change: func(a *agent.Agent) { a.Health.ReportedAt = at(5) }, want: false},
		{name: "components", change: func(a *agent.Agent) {
			a.Health.Components = &agent.ComponentSummary{Total: 3, UnhealthyCount: 1, Unhealthy: []string{"exporter:otlp"}}
		}, want: false},
		{name: "version", change: func(a *agent.Agent) { a.ServiceVersion = "1.1" }, want: false},
		{name: "config", change: func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigApplied }, want: false},
		{name: "package", change: func(a *agent.Agent) { a.Package.DownloadPercent = 5 }, want: false},
		{name: "update gone", change: func(a *agent.Agent) { a.Update = nil }, want: false},
		{name: "update step", change: func(a *agent.Agent) {
			a.Update = &agent.UpdateComponent{Status: "done", Steps: map[string]agent.UpdateStep{"step:offered": {Status: "failed"}}}
		}, want: false},
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
		name              string
		heartbeat         time.Duration
		offlineHeartbeats int
		poll              time.Duration
		want              time.Duration
	}{
		{name: "defaults", heartbeat: 30 * time.Second, offlineHeartbeats: 3, poll: time.Second, want: 9 * time.Second},   // 90 s / 10
		{name: "short heartbeat", heartbeat: 2 * time.Second, offlineHeartbeats: 3, poll: time.Second, want: time.Second}, // 0.6 s: the poll's
		{name: "slow poll", heartbeat: 30 * time.Second, offlineHeartbeats: 3, poll: 15 * time.Second, want: 15 * time.Second},
		{name: "patient", heartbeat: time.Minute, offlineHeartbeats: 5, poll: time.Second, want: 30 * time.Second}, // 300 s / 10
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{"t"},
				Heartbeat: tt.heartbeat, OfflineAfterHeartbeats: tt.offlineHeartbeats, PollInterval: tt.poll}, newMemAgents(), memConfigs{})
			if err != nil {
				t.Fatal(err)
			}
			if got := g.SweepEvery(); got != tt.want {
				t.Errorf("SweepEvery %v, want %v", got, tt.want)
			}
		})
	}
}

// Only a heartbeat that changes nothing and is owed nothing is answered on
// the connection's goroutine; every other message goes to report.
func TestAnswerIdle(t *testing.T) {
	const caps = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat)
	tests := []struct {
		name    string
		session func(*session)
		msg     *protobufs.AgentToServer
		want    bool
	}{
		{name: "idle heartbeat", msg: msg(), want: true},
		{name: "same capabilities", msg: msg(withCapabilities(caps)), want: true},
		{name: "new capabilities", msg: msg(withCapabilities(caps | 1<<20)), want: false},
		{name: "description", msg: msg(withVersion("1.0")), want: false},
		{name: "health", msg: msg(withHealth(hl(true, "StatusOK", "", 1, nil))), want: false},
		{name: "effective configuration", msg: msg(withEffective(map[string]string{"": "a: 1"})), want: false},
		{name: "config status", msg: msg(withRemoteConfig(hashA, applied, "")), want: false},
		{name: "goodbye", msg: msg(func(m *protobufs.AgentToServer) { m.AgentDisconnect = &protobufs.AgentDisconnect{} }), want: false},
		{name: "heartbeat offer due", session: func(s *session) { s.heartbeatSent = false }, msg: msg(), want: false},
		{name: "configuration pending", session: func(s *session) { s.view.DesiredHash = "abcd01" }, msg: msg(), want: false},
		{name: "configuration sent", session: func(s *session) { s.view.DesiredHash, s.sentHash = "abcd01", "abcd01" }, msg: msg(), want: true},
		{name: "package offer pending", session: func(s *session) {
			s.view.PackageOffer, s.view.Capabilities = "2.0", caps|agent.CapabilityAcceptsPackages
		}, msg: msg(), want: false},
		// its updater is sent the offer (delegate.go), not the agent
		{name: "package offer pending, the agent takes no packages", session: func(s *session) { s.view.PackageOffer = "2.0" }, msg: msg(), want: true},
		{name: "offline in the view", session: func(s *session) { s.view.Online = false }, msg: msg(), want: false},
		{name: "another task's in the view", session: func(s *session) { s.view.Task = "gw-other" }, msg: msg(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{now: at(60)}
			g, err := New(Config{Now: clk.Now, Tokens: []string{"t"}, Task: "gw-1"}, newMemAgents(), memConfigs{})
			if err != nil {
				t.Fatal(err)
			}
			s := &session{id: id1, uid: uid1, connectedAt: at(0), capabilities: caps, heartbeatSent: true,
				view: agent.Agent{ID: id1, Online: true, ConnectedAt: at(0), Task: "gw-1", Capabilities: caps, ServiceVersion: "1.0"}}
			s.heard(at(0))
			if tt.session != nil {
				tt.session(s)
			}
			resp, ok := g.answerIdle(s, tt.msg)
			if ok != tt.want {
				t.Fatalf("answered idle: %v, want %v", ok, tt.want)
			}
			if ok && (s.silentAt(at(60+90), 90*time.Second) || !bytes.Equal(resp.GetInstanceUid(), uid1)) {
				t.Error("an idle heartbeat was answered without being heard")
			}
			if !ok && !s.silentAt(at(0+91), 90*time.Second) {
				t.Error("a message left to report was heard already")
			}
		})
	}
}
