package simfleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/open-telemetry/opamp-go/protobufs"
)

func TestFleet_ConnectsWithTokenAndDescribesItself(t *testing.T) {
	h := start(t, 3, func(c *Config) { c.CanaryCount, c.Timezones = 2, []string{"Europe/Berlin", "UTC"} })
	wantCaps := uint64(capabilities)
	for n, want := range map[int]map[string]string{
		1: {"host.name": "sim-01", "site.timezone": "Europe/Berlin", "labels.wave": "canary"},
		2: {"host.name": "sim-02", "site.timezone": "UTC", "labels.wave": "canary"},
		3: {"host.name": "sim-03", "site.timezone": "Europe/Berlin"}, // not a canary: no labels.wave
	} {
		maps.Copy(want, map[string]string{
			"service.name": "otelcol-contrib", "service.instance.id": h.uid(n).String(), "service.version": "0.161.0",
			"host.arch": "amd64", "os.type": "linux", "labels.fleet": "edge",
		})
		got := h.srv.view(h.uid(n))
		if !maps.Equal(got.attrs, want) {
			t.Errorf("agent %d attributes\n got %v\nwant %v", n, got.attrs, want)
		}
		if got.authz != "Bearer sim-token" {
			t.Errorf("agent %d Authorization %q", n, got.authz)
		}
		if got.caps != wantCaps {
			t.Errorf("agent %d capabilities %b, want %b", n, got.caps, wantCaps)
		}
		if got.health.GetHealthy() != true || got.health.GetStatus() != StatusOK || got.health.GetStartTimeUnixNano() != uint64(t0.UnixNano()) {
			t.Errorf("agent %d initial health %v", n, got.health)
		}
		if p := got.pkgs.GetPackages()[""]; p.GetAgentHasVersion() != "0.161.0" || p.GetStatus() != pkgInstalled {
			t.Errorf("agent %d initial package status %v", n, p)
		}
	}
	h.waitFleet(t, "all connected", func(s []AgentState) bool { return s[0].Connected && s[1].Connected && s[2].Connected })
	if s := h.fleet.Snapshot()[0]; s.Version != "0.161.0" || !s.Healthy || s.Status != StatusOK || !s.Canary || s.HostName != "sim-01" {
		t.Errorf("snapshot of agent 1: %+v", s)
	}
}

func TestFleet_SendsNoAuthorizationWithoutToken(t *testing.T) {
	h := start(t, 1, func(c *Config) { c.Token = "" })
	if got := h.srv.view(h.uid(1)).authz; got != "" {
		t.Errorf("Authorization %q, want none", got)
	}
}

// configMsg is a remote configuration with the sha256 of its body as hash,
// as Myriarch renders them.
func configMsg(body string) (*protobufs.ServerToAgent, string) {
	sum := sha256.Sum256([]byte(body))
	return &protobufs.ServerToAgent{RemoteConfig: &protobufs.AgentRemoteConfig{
		ConfigHash: sum[:],
		Config: &protobufs.AgentConfigMap{ConfigMap: map[string]*protobufs.AgentConfigFile{
			"": {Body: []byte(body), ContentType: "text/yaml"},
		}},
	}}, hex.EncodeToString(sum[:])
}

// A configuration sent to agent 1 walks it through the
// supervisor's sequence, checking each report before the clock moves on.
func TestFleet_AppliesRemoteConfigAndRestarts(t *testing.T) {
	h := start(t, 1, nil)
	uid := h.uid(1)
	msg, hash := configMsg("receivers: {otlp: {}}\n")
	h.srv.send(t, uid, msg)

	h.srv.wait(t, uid, "APPLYING", func(a *seen) bool { return a.remote.GetStatus() == applying })
	if s := h.fleet.Snapshot()[0]; s.ConfigStatus != "APPLYING" || s.ConfigHash != hash || !s.Busy {
		t.Errorf("snapshot while applying: %+v", s)
	}
	h.step(t, 1)
	h.srv.wait(t, uid, "APPLIED, effective config, restart", func(a *seen) bool {
		return a.remote.GetStatus() == applied && a.effective == "receivers: {otlp: {}}\n" &&
			!a.health.GetHealthy() && a.health.GetStatus() == ""
	})
	if got := h.srv.view(uid).health.GetStartTimeUnixNano(); got != uint64(t0.Add(hour).UnixNano()) {
		t.Errorf("restarted process start %d, want the restart time", got)
	}
	h.step(t, 1)
	h.srv.wait(t, uid, "StatusStarting", func(a *seen) bool { return a.health.GetStatus() == StatusStarting })
	h.step(t, 1)
	h.srv.wait(t, uid, "StatusOK", func(a *seen) bool { return a.health.GetHealthy() && a.health.GetStatus() == StatusOK })

	got := h.srv.view(uid)
	assertLog(t, "config", got.configLog, []string{"UNSET ", "APPLYING " + hash, "APPLIED " + hash})
	assertLog(t, "health", got.healthLog, []string{"healthy StatusOK", "unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"})
	h.waitFleet(t, "idle", func(s []AgentState) bool { return !s[0].Busy })
	if s := h.fleet.Snapshot()[0]; s.ConfigStatus != "APPLIED" || s.ConfigHash != hash || !s.Healthy {
		t.Errorf("snapshot after applying: %+v", s)
	}
}

func TestFleet_WaitEndsWithItsContext(t *testing.T) {
	h := start(t, 1, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := h.fleet.Wait(ctx, func([]AgentState) bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait returned %v, want the context's error", err)
	}
}

func assertLog(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s reports\n got %q\nwant %q", what, got, want)
	}
}

// A watcher is told each change of an agent with that agent's state, and
// nothing after it stops watching.
func TestFleet_WatchTellsEachChangeOfAnAgent(t *testing.T) {
	h := start(t, 2, nil)
	h.waitFleet(t, "all connected", func(s []AgentState) bool { return s[0].Connected && s[1].Connected })
	var mu sync.Mutex
	var log []string
	stop := h.fleet.Watch(func(s AgentState) {
		mu.Lock()
		defer mu.Unlock()
		log = appendChanged(log, s.HostName+" "+s.ConfigStatus+" "+s.ConfigHash+" "+s.Status)
	})
	msg, hash := configMsg("receivers: {otlp: {}}\n")
	h.srv.send(t, h.uid(2), msg)
	h.srv.wait(t, h.uid(2), "APPLYING", func(a *seen) bool { return a.remote.GetStatus() == applying })
	h.step(t, 2)
	h.srv.wait(t, h.uid(2), "APPLIED, restart", func(a *seen) bool {
		return a.remote.GetStatus() == applied && !a.health.GetHealthy() && a.health.GetStatus() == ""
	})
	h.waitFleet(t, "agent 2 restarting", func(s []AgentState) bool { return s[1].ConfigStatus == "APPLIED" && !s[1].Healthy })
	stop()
	mu.Lock()
	got := slices.Clone(log)
	mu.Unlock()
	want := []string{"sim-02   StatusOK", "sim-02 APPLYING " + hash + " StatusOK", "sim-02 APPLIED " + hash + " StatusOK",
		"sim-02 APPLIED " + hash + " "}
	if !slices.Equal(got, want) {
		t.Errorf("watched\n got %q\nwant %q", got, want)
	}
	h.step(t, 2) // the restart goes on: no longer watched
	h.waitFleet(t, "agent 2 starting", func(s []AgentState) bool { return s[1].Status == StatusStarting })
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(log, want) {
		t.Errorf("watched after stop: %q", log[len(want):])
	}
}
