package simfleet

import (
	"strings"
	"testing"
)

// Agent 2 of two fails; configurations fail only on it and only with the
// marker, in the configured mode.
func TestFleet_FailureMode(t *testing.T) {
	const marked = "receivers: {}\n# simfleet: fail\n"
	for _, tc := range []struct {
		name       string
		agent      int
		body       string
		mode       FailMode
		steps      int
		wantConfig string   // last config status
		wantHealth []string // health reports after the initial StatusOK
		wantError  string   // in the config error or the health lastError
	}{
		{"rejects marked config", 2, marked, FailReject, 1, "FAILED", nil, `contains "# simfleet: fail"`}, // no restart
		{"turns unhealthy after marked config", 2, marked, FailUnhealthy, 4, "APPLIED", []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK", "unhealthy StatusRecoverableError"}, "exporter failing"},
		{"applies unmarked config", 2, "receivers: {}\n", FailReject, 3, "APPLIED", []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"}, ""},  // failing agents fail marked configs only
		{"healthy agent applies marked config", 1, marked, FailReject, 3, "APPLIED", []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"}, ""}, // the marker alone fails nothing
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, 2, func(c *Config) { c.FailAgents, c.FailMode = []int{2}, tc.mode })
			uid := h.uid(tc.agent)
			msg, hash := configMsg(tc.body)
			h.srv.send(t, uid, msg)
			for range tc.steps {
				h.step(t, tc.agent)
			}
			h.srv.wait(t, uid, tc.wantConfig, func(a *seen) bool {
				return configEntry(a.remote) == tc.wantConfig+" "+hash && len(a.healthLog) == 1+len(tc.wantHealth)
			})
			got := h.srv.view(uid)
			assertLog(t, "health", got.healthLog[1:], tc.wantHealth)
			if msg := got.remote.GetErrorMessage() + got.health.GetLastError(); !strings.Contains(msg, tc.wantError) || (tc.wantError == "") != (msg == "") {
				t.Errorf("error %q, want one containing %q", msg, tc.wantError)
			}
			if wantEffective := tc.wantConfig == "APPLIED"; (got.effective == tc.body) != wantEffective {
				t.Errorf("effective config %q after %s", got.effective, tc.wantConfig)
			}
		})
	}
}

func TestConfig_FailingAgents(t *testing.T) {
	count := func(cfg Config) (n int) {
		for i := 1; i <= cfg.N; i++ {
			if cfg.failing(i) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name        string
		agents      []int
		probability float64
		want        int
	}{
		{"none", nil, 0, 0},                    // nobody fails by default
		{"listed", []int{3, 7}, 0, 2},          // exactly the listed agents
		{"everyone", nil, 1, 100},              // probability 1
		{"some", nil, 0.2, 17},                 // seeded draw: the same 17 every run with seed 1
		{"listed and drawn", []int{1}, 1, 100}, // the union
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.N, cfg.FailAgents, cfg.FailProbability = 100, tc.agents, tc.probability
			if got := count(cfg); got != tc.want {
				t.Errorf("%d failing agents, want %d", got, tc.want)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.FailAgents = []int{3, 7}
	if !cfg.failing(3) || !cfg.failing(7) || cfg.failing(4) {
		t.Error("listed agents 3 and 7 should fail, 4 not")
	}
}
