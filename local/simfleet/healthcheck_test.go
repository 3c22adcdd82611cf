package simfleet

import (
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"
)

// probe GETs an agent's health check as a gate's probe would, with the
// template http://{host}/ and {host} the agent's ProbeAttribute.
func probe(t *testing.T, addr string) (int, probeAnswer) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a probeAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("health check body: %v", err)
	}
	return resp.StatusCode, a
}

func withHealthCheck(c *Config) {
	c.HealthCheck = true
	c.Zones = []string{"eu-west-1/eu-west-1a", "eu-west-1/eu-west-1b"}
}

// Every agent reports the address of a health check of its own; host.name
// stays the agent's name.
func TestHealthCheck_Address(t *testing.T) {
	h := start(t, 2, withHealthCheck)
	seenAddrs := map[string]bool{}
	for n, s := range h.fleet.Snapshot() {
		got := h.srv.view(h.uid(n + 1)).attrs
		host, port, err := net.SplitHostPort(got[ProbeAttribute])
		if err != nil || host != "127.0.0.1" || port == "0" || got[ProbeAttribute] != s.ProbeAddress {
			t.Errorf("agent %d reports %s=%q (snapshot %q), want 127.0.0.1:<port>", n+1, ProbeAttribute, got[ProbeAttribute], s.ProbeAddress)
		}
		if got["host.name"] != HostName(n+1) {
			t.Errorf("agent %d host.name %q", n+1, got["host.name"])
		}
		seenAddrs[s.ProbeAddress] = true
	}
	if len(seenAddrs) != 2 {
		t.Errorf("agents share a health check address: %v", seenAddrs)
	}
}

// 200 while healthy; 503 while exports fail (FailExporters) or the collector
// restarts; 200 again after.
func TestHealthCheck_Answers(t *testing.T) {
	h := start(t, 2, withHealthCheck)
	s := h.fleet.Snapshot()
	one, two := s[0].ProbeAddress, s[1].ProbeAddress
	h.clock.move(time.Minute)
	if code, a := probe(t, one); code != http.StatusOK || a.Status != "Server available" || !a.UpSince.Equal(t0) || a.Uptime != "1m0s" {
		t.Errorf("healthy agent: %d %+v", code, a)
	}

	if err := h.fleet.FailExporters("eu-west-1/eu-west-1a", 0.1); err != nil {
		t.Fatal(err)
	}
	if code, a := probe(t, one); code != http.StatusServiceUnavailable || a.Status != "Server not available" {
		t.Errorf("agent failing exports: %d %+v", code, a)
	}
	if code, _ := probe(t, two); code != http.StatusOK {
		t.Errorf("agent of another zone: %d", code)
	}
	if err := h.fleet.HealExporters("eu-west-1/eu-west-1a"); err != nil {
		t.Fatal(err)
	}
	if code, _ := probe(t, one); code != http.StatusOK {
		t.Errorf("healed agent: %d", code)
	}

	msg, _ := configMsg("receivers: {otlp: {}}\n")
	h.srv.send(t, h.uid(2), msg)
	h.step(t, 2) // APPLIED, the restart begins
	h.waitFleet(t, "the restart", func(s []AgentState) bool { return s[1].ConfigStatus == "APPLIED" && !s[1].Healthy })
	if code, _ := probe(t, two); code != http.StatusServiceUnavailable {
		t.Errorf("restarting agent: %d", code)
	}
	h.step(t, 2)
	h.step(t, 2)
	h.waitFleet(t, "StatusOK", func(s []AgentState) bool { return s[1].Status == StatusOK })
	if code, a := probe(t, two); code != http.StatusOK || !a.UpSince.Equal(t0.Add(time.Minute+hour)) {
		t.Errorf("restarted agent: %d %+v, want up since the restart", code, a)
	}
}

func TestHealthCheck_ClosedByStop(t *testing.T) {
	h := start(t, 1, withHealthCheck)
	addr := h.fleet.Snapshot()[0].ProbeAddress
	if err := h.fleet.Stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		t.Error("the health check answers after Stop")
	}
}

func TestHealthCheck_OffByDefault(t *testing.T) {
	h := start(t, 1, nil)
	if a := h.srv.view(h.uid(1)).attrs; a[ProbeAttribute] != "" || h.fleet.Snapshot()[0].ProbeAddress != "" {
		t.Errorf("a probe address without HealthCheck: %v", a)
	}
}
