package fleet

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/selector"
)

func TestCount(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	live := agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Retention: 7 * 24 * time.Hour}
	f := Fleet{Name: "edge", Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": "edge"}}, Config: Config{Hash: "h2"}}
	applied := func(h string) agent.RemoteConfigStatus {
		return agent.RemoteConfigStatus{Hash: h, Status: agent.ConfigApplied}
	}
	members := []agent.Agent{
		{ID: "on-target", Online: true, LastSeen: now, ServiceVersion: "0.162.0", DesiredHash: "h2", RemoteConfig: applied("h2")},
		{ID: "behind", Online: true, LastSeen: now, ServiceVersion: "0.161.0", DesiredHash: "h2", RemoteConfig: applied("h1")},   // drifted
		{ID: "silent", Online: true, LastSeen: now.Add(-2 * time.Minute), DesiredHash: "h1", RemoteConfig: applied("h1")},        // its task died: offline
		{ID: "reconnecting", Online: false, LastSeen: now.Add(-5 * time.Second), DesiredHash: "h1", RemoteConfig: applied("h1")}, // within the grace: online
		{ID: "gone", Online: false, LastSeen: now.Add(-8 * 24 * time.Hour), ServiceVersion: "0.162.0", DesiredHash: "h2", RemoteConfig: applied("h1")},
	}
	errored := []agent.Agent{
		{ID: "both", AssignmentError: "the agent matches several fleets: [blue edge]", Attributes: map[string]string{"labels.fleet": "edge", "labels.color": "blue"}},
		{ID: "elsewhere", AssignmentError: "the agent matches several fleets: [a b]", Attributes: map[string]string{"labels.fleet": "lab"}},
	}
	got := Count(f, members, errored, "0.162.0", live, now)
	want := Counts{Total: 4, Online: 3, OnTargetVersion: 1, OnConfigHash: 1, Drifted: 1, Gone: 1, AssignmentErrors: 1}
	if got != want {
		t.Fatalf("Count = %+v, want %+v", got, want)
	}
}

// A gone agent that reconnects counts again at once: gone is derived from
// when it was last seen, not stored.
func TestCount_GoneAgentReconnecting_CountsAgain(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	live := agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Retention: 7 * 24 * time.Hour}
	f := Fleet{Name: "edge", Config: Config{Hash: "h2"}}
	applied := agent.RemoteConfigStatus{Hash: "h2", Status: agent.ConfigApplied}
	member := agent.Agent{ID: "back", Online: false, LastSeen: now.Add(-8 * 24 * time.Hour), ServiceVersion: "0.162.0",
		DesiredHash: "h2", RemoteConfig: applied}
	if got, want := Count(f, []agent.Agent{member}, nil, "0.162.0", live, now), (Counts{Gone: 1}); got != want {
		t.Fatalf("gone: Count = %+v, want %+v", got, want)
	}
	member.Online, member.LastSeen, member.ConnectedAt = true, now, now // it reconnects
	if got, want := Count(f, []agent.Agent{member}, nil, "0.162.0", live, now), (Counts{Total: 1, Online: 1, OnTargetVersion: 1, OnConfigHash: 1}); got != want {
		t.Fatalf("reconnected: Count = %+v, want %+v", got, want)
	}
}
