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
		{name: "rejects marked config", agent: 2, body: marked, mode: FailReject, steps: 1, wantConfig: "FAILED", wantHealth: nil, wantError: `contains "# simfleet: fail"`}, // no restart
		{name: "turns unhealthy after marked config", agent: 2, body: marked, mode: FailUnhealthy, steps: 4, wantConfig: "APPLIED", wantHealth: []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK", "unhealthy StatusRecoverableError"}, wantError: "exporter failing"},
		{name: "applies unmarked config", agent: 2, body: "receivers: {}\n", mode: FailReject, steps: 3, wantConfig: "APPLIED", wantHealth: []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"}, wantError: ""},  // failing agents fail marked configs only
		{name: "healthy agent applies marked config", agent: 1, body: marked, mode: FailReject, steps: 3, wantConfig: "APPLIED", wantHealth: []string{"unhealthy ", "unhealthy StatusStarting", "healthy StatusOK"}, wantError: ""}, // the marker alone fails nothing
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
		{name: "none", agents: nil, probability: 0, want: 0},                    // nobody fails by default
		{name: "listed", agents: []int{3, 7}, probability: 0, want: 2},          // exactly the listed agents
		{name: "everyone", agents: nil, probability: 1, want: 100},              // probability 1
		{name: "some", agents: nil, probability: 0.2, want: 17},                 // seeded draw: the same 17 every run with seed 1
		{name: "listed and drawn", agents: []int{1}, probability: 1, want: 100}, // the union
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
