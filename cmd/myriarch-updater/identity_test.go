package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
)

// The instance UID is made once, a UUIDv7, and kept.
func TestInstanceUID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := instanceUID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if first.Version() != 7 {
		t.Errorf("version %d, want a UUIDv7", first.Version())
	}
	again, err := instanceUID(dir)
	if err != nil || again != first {
		t.Fatalf("second start %s, %v; want %s", again, err, first)
	}
	if err := os.WriteFile(filepath.Join(dir, "instance_uid"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := instanceUID(dir); err == nil {
		t.Error("a broken instance_uid was replaced by a new identity")
	}
}

// The link is the canonical lowercase form, from the configuration or the
// supervisor's state, read anew each time.
func TestCollectorUID(t *testing.T) {
	var c Config
	c.Collector.InstanceUID = "0190A6E2-8D3C-7B1E-9F00-1234567890AB"
	if got, err := collectorUID(c); err != nil || got != "0190a6e2-8d3c-7b1e-9f00-1234567890ab" {
		t.Errorf("from the config: %q, %v", got, err)
	}
	c.Collector.InstanceUID = ""
	c.Collector.SupervisorState = writeFile(t, t.TempDir(), "persistent_state.yaml", "instance_id: 0190A6E28D3C7B1E9F001234567890AB\n")
	if got, err := collectorUID(c); err != nil || got != "0190a6e2-8d3c-7b1e-9f00-1234567890ab" {
		t.Errorf("from the supervisor: %q, %v", got, err)
	}
	other := uuid.New().String()
	if err := os.WriteFile(c.Collector.SupervisorState, []byte("instance_id: "+other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := collectorUID(c); got != other {
		t.Errorf("after the supervisor changed it: %q, want %q", got, other)
	}
	for _, content := range []string{"instance_id: not-a-uuid\n", "other: x\n", "{"} {
		if err := os.WriteFile(c.Collector.SupervisorState, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := collectorUID(c); err == nil {
			t.Errorf("%q read as %q", content, got)
		}
	}
}
