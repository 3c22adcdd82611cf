package simfleet

import (
	"testing"
	"time"
)

// Over plain HTTP the agent polls at the heartbeat interval and takes a
// configuration from a poll's response.
func TestFleet_PlainHTTP(t *testing.T) {
	h := startOn(t, newTestServer(t, false), 1, func(c *Config) { c.Heartbeat = 5 * time.Millisecond })
	uid := h.uid(1)
	msg, hash := configMsg("a: 1\n")
	h.srv.send(t, uid, msg)
	h.srv.wait(t, uid, "APPLYING over HTTP", func(a *seen) bool { return configEntry(a.remote) == "APPLYING "+hash })
	if got := h.srv.view(uid); got.authz != "Bearer sim-token" || got.attrs["service.version"] != "0.161.0" {
		t.Errorf("over HTTP: Authorization %q, attributes %v", got.authz, got.attrs)
	}
}

// opamp-go sends heartbeats at the configured interval; Stop sends
// AgentDisconnect.
func TestFleet_HeartbeatsAndDisconnect(t *testing.T) {
	h := start(t, 2, func(c *Config) { c.Heartbeat = 5 * time.Millisecond })
	for n := 1; n <= 2; n++ {
		h.srv.wait(t, h.uid(n), "heartbeats", func(a *seen) bool { return a.messages >= 4 })
	}
	if err := h.fleet.Stop(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		h.srv.wait(t, h.uid(n), "AgentDisconnect", func(a *seen) bool { return a.disconnected })
	}
	if err := h.fleet.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// Delays are divided by Speed: an apply delay of 2 s at speed 100 sleeps 20 ms.
func TestFleet_SpeedScalesDelays(t *testing.T) {
	h := start(t, 1, func(c *Config) { c.Speed, c.Delays.ApplyMin, c.Delays.ApplyMax = 100, 2*time.Second, 2*time.Second })
	msg, _ := configMsg("a: 1\n")
	h.srv.send(t, h.uid(1), msg)
	h.clock.waitSleeping(t, 1)
	h.clock.mu.Lock()
	due := h.clock.waiters[0].at
	h.clock.mu.Unlock()
	if want := t0.Add(20 * time.Millisecond); !due.Equal(want) {
		t.Errorf("apply delay ends at %v, want %v", due, want)
	}
}
