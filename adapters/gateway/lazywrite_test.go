package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

var applying = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING

func TestDeferrable(t *testing.T) {
	healthy := agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0}
	base := agent.Agent{ID: id1, Online: true, ServiceVersion: "1.0", Health: healthy,
		RemoteConfig: agent.RemoteConfigStatus{Hash: "aa", Status: agent.ConfigApplied, Since: t0}}
	cases := []struct {
		name string
		mut  func(*agent.Agent)
		want bool
	}{
		{name: "APPLYING a new hash", mut: func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "bb", Status: agent.ConfigApplying, Since: t0.Add(time.Second)}
		}, want: true},
		{name: "APPLIED", mut: func(a *agent.Agent) { a.RemoteConfig.Hash, a.RemoteConfig.Since = "bb", t0.Add(time.Second) }, want: false},
		{name: "FAILED", mut: func(a *agent.Agent) { a.RemoteConfig.Status, a.RemoteConfig.Error = agent.ConfigFailed, "bad" }, want: false},
		{name: "effective configuration", mut: func(a *agent.Agent) { a.EffectiveHash = "e2" }, want: true},
		{name: "healthy again, later", mut: func(a *agent.Agent) { a.Health.ReportedAt = t0.Add(time.Minute) }, want: true},
		{name: "a restart: healthy to start-up", mut: func(a *agent.Agent) { a.Health = agent.Health{ReportedAt: t0.Add(time.Second)} }, want: false},
		{name: "an error", mut: func(a *agent.Agent) {
			a.Health = agent.Health{Status: "StatusPermanentError", LastError: "boom", ReportedAt: t0.Add(time.Second)}
		}, want: false},
		{name: "new version", mut: func(a *agent.Agent) { a.ServiceVersion = "1.1" }, want: false},
		{name: "offline", mut: func(a *agent.Agent) { a.Online = false }, want: false},
		{name: "APPLYING with a new version", mut: func(a *agent.Agent) {
			a.RemoteConfig.Status, a.ServiceVersion = agent.ConfigApplying, "1.1"
		}, want: false},
	}
	for _, c := range cases {
		next := base
		c.mut(&next)
		if got := deferrable(base, next); got != c.want {
			t.Errorf("%s: deferrable = %v, want %v", c.name, got, c.want)
		}
	}
	starting := base
	starting.Health = agent.Health{ReportedAt: t0}
	next := starting
	next.Health = agent.Health{Status: agent.StatusStarting, ReportedAt: t0.Add(time.Second)}
	if !deferrable(starting, next) {
		t.Error("start-up followed by start-up must be deferrable")
	}
	next.Health = healthy
	if deferrable(starting, next) {
		t.Error("the end of a start-up (healthy) must be written at once")
	}
}

// In a wave: the APPLYING report is answered without waiting for a write,
// and rides on the APPLIED write that follows; nothing writes it alone.
func TestGateway_DeferrableChangeRidesOnTheNextWrite(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.LazyWrite = 300 * time.Millisecond })
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	if n := h.agents.writeCount(); n != 1 {
		t.Fatalf("%d writes after the connection, want 1", n)
	}
	w.send(msg(withRemoteConfig(hashA, applying, "")))
	if n := h.agents.writeCount(); n != 1 {
		t.Fatalf("APPLYING written at once (%d writes): it may wait", n)
	}
	w.send(msg(withRemoteConfig(hashA, applied, ""), withEffective(map[string]string{"": "a: 1"})))
	if n := h.agents.writeCount(); n != 2 {
		t.Fatalf("%d writes after APPLIED, want 2: APPLIED is written before the answer", n)
	}
	if a := h.agents.get(id1); a.RemoteConfig.Status != agent.ConfigApplied || a.EffectiveHash == "" {
		t.Fatalf("stored %+v, want APPLIED with its effective hash", a.RemoteConfig)
	}
	time.Sleep(500 * time.Millisecond)
	if n := h.agents.writeCount(); n != 2 {
		t.Fatalf("%d writes, want 2: the APPLYING report was written on its own", n)
	}
}

// A deferrable change alone is written once LazyWrite has passed.
func TestGateway_DeferredChangeIsWrittenAfterLazyWrite(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.LazyWrite = 50 * time.Millisecond })
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	w.send(msg(withRemoteConfig(hashA, applying, "")))
	h.eventually("the APPLYING report stored", func() bool {
		return h.agents.get(id1).RemoteConfig.Status == agent.ConfigApplying && h.agents.writeCount() == 2
	})
}

// A drain writes what waits at once: the task's lease ends with it.
func TestGateway_DrainWritesDeferredChanges(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.LazyWrite = time.Hour })
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	w.send(msg(withRemoteConfig(hashA, applying, "")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if a := h.agents.get(id1); a.RemoteConfig.Status != agent.ConfigApplying {
		t.Fatalf("after the drain the agent is stored %+v, want APPLYING", a.RemoteConfig)
	}
}
