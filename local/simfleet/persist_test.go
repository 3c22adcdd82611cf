package simfleet

import (
	"testing"
)

// A fleet with a state directory comes back from a restart as a collector
// under the OpAMP supervisor does: on the configuration it applied, with
// the remote configuration status it reported, not on the bootstrap one.
func TestFleet_StateDirKeepsTheAppliedConfigAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	srv := newTestServer(t, true)
	h := startOn(t, srv, 1, func(c *Config) { c.StateDir = dir })
	uid := h.uid(1)
	msg, hash := configMsg("receivers: {otlp: {}}\n")
	h.srv.send(t, uid, msg)
	h.srv.wait(t, uid, "APPLYING", func(a *seen) bool { return a.remote.GetStatus() == applying })
	h.step(t, 1)
	h.srv.wait(t, uid, "APPLIED", func(a *seen) bool { return a.remote.GetStatus() == applied })
	if err := h.fleet.Stop(); err != nil {
		t.Fatal(err)
	}

	again := startOn(t, srv, 1, func(c *Config) { c.StateDir = dir })
	s := again.fleet.Snapshot()[0]
	if s.ConfigHash != hash || s.ConfigStatus != "APPLIED" {
		t.Fatalf("after the restart: %+v, want config %s APPLIED", s, hash)
	}
	again.srv.wait(t, uid, "the kept configuration reported", func(a *seen) bool {
		return a.effective == "receivers: {otlp: {}}\n" && a.remote.GetStatus() == applied
	})

	fresh := startOn(t, newTestServer(t, true), 1, nil)
	if s := fresh.fleet.Snapshot()[0]; s.ConfigHash == hash {
		t.Fatalf("a fleet without a state directory starts on the bootstrap configuration: %+v", s)
	}
}
