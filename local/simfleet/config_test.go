package simfleet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/protobufs"
)

func TestConfig_Normalize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // part of the error; "" for none
	}{
		{name: "default", change: func(*Config) {}, want: ""},                                                                      // the demo fleet is valid
		{name: "http", change: func(c *Config) { c.Endpoint = "http://127.0.0.1:4320/v1/opamp" }, want: ""},                        // plain HTTP
		{name: "no agents", change: func(c *Config) { c.N = 0 }, want: "n is 0"},                                                   // at least one agent
		{name: "bad scheme", change: func(c *Config) { c.Endpoint = "tcp://x" }, want: "scheme must be"},                           // ws, wss, http, https
		{name: "http without poll", change: func(c *Config) { c.Endpoint, c.Heartbeat = "https://x/v1/opamp", 0 }, want: "poll"},   // HTTP needs a poll interval
		{name: "ws without heartbeat", change: func(c *Config) { c.Heartbeat = 0 }, want: ""},                                      // WebSocket: 0 disables heartbeats
		{name: "no version", change: func(c *Config) { c.StartVersion = "" }, want: "start version"},                               // a collector runs a version
		{name: "fail agent 0", change: func(c *Config) { c.FailAgents = []int{0} }, want: "outside 1..50"},                         // agents count from 1
		{name: "fail agent N+1", change: func(c *Config) { c.FailAgents = []int{51} }, want: "outside 1..50"},                      // ... to N
		{name: "probability", change: func(c *Config) { c.FailProbability = 1.5 }, want: "outside 0..1"},                           // a probability
		{name: "fail mode", change: func(c *Config) { c.FailMode = "crash" }, want: "fail mode"},                                   // reject or unhealthy
		{name: "apply range", change: func(c *Config) { c.Delays.ApplyMin = 5 * time.Second }, want: "reversed"},                   // min above max
		{name: "two errors", change: func(c *Config) { c.N, c.StartVersion = 0, "" }, want: "start version"},                       // all errors at once
		{name: "negative traffic", change: func(c *Config) { c.SpansPerSecond = -1 }, want: "negative"},                            // 0 is the default
		{name: "export failure", change: exportFailure("eu-west-1", 0), want: ""},                                                  // a region of Zones
		{name: "export share", change: exportFailure("", 2), want: "outside 0..1"},                                                 // a share
		{name: "export zone typo", change: exportFailure("eu-west-1/eu-west-1c", 0), want: "matches none"},                         // no agent would ever fail
		{name: "export without marker", change: func(c *Config) { c.ExportFailure.Where = "eu-west-1" }, want: "without a marker"}, // would fail nothing
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.change(&cfg)
			_, err := cfg.normalize()
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// exportFailure sets a marked export failure in a fleet of one zone, eu-west-1a.
func exportFailure(where string, fraction float64) func(*Config) {
	return func(c *Config) {
		c.Zones = []string{"eu-west-1/eu-west-1a"}
		c.ExportFailure = ExportFailure{Marker: "# exporter-fail", Where: where, Fraction: fraction}
	}
}

func TestConfig_NormalizeFillsDefaults(t *testing.T) {
	cfg, err := Config{N: 1, Endpoint: "ws://x/v1/opamp", StartVersion: "0.161.0"}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	marked := cfg
	exportFailure("", 0)(&marked)
	if marked, _ = marked.normalize(); marked.ExportFailure.Fraction != 1 {
		t.Errorf("a marked export failure without a share fails %v of the spans, want all", marked.ExportFailure.Fraction)
	}
	if cfg.ServiceName != "otelcol-contrib" || len(cfg.Timezones) != 1 || cfg.Timezones[0] != "UTC" ||
		cfg.FailMode != FailReject || cfg.FailMarker != DefaultFailMarker || cfg.Speed != 1 || cfg.Clock == nil || cfg.Logger == nil ||
		cfg.SpansPerSecond != 100 || cfg.ExportFailure != (ExportFailure{}) {
		t.Errorf("defaults not filled: %+v", cfg)
	}
}

func TestStart_RefusesBadConfig(t *testing.T) {
	if _, err := Start(t.Context(), Config{}); err == nil {
		t.Error("Start accepted an empty configuration")
	}
}

func TestIdentity(t *testing.T) {
	a := InstanceUID(1, 1)
	if a != InstanceUID(1, 1) || a.Version() != 5 || a.Variant() != uuid.RFC4122 {
		t.Errorf("InstanceUID(1, 1) = %v: not stable or not a version 5 UUID", a)
	}
	if a == InstanceUID(1, 2) || a == InstanceUID(2, 1) {
		t.Error("instance UIDs collide across agents or seeds")
	}
	for n, want := range map[int]string{1: "sim-01", 9: "sim-09", 50: "sim-50", 100: "sim-100"} {
		if got := HostName(n); got != want {
			t.Errorf("HostName(%d) = %q, want %q", n, got, want)
		}
	}
	cfg := DefaultConfig()
	cfg.Timezones = []string{"Europe/Berlin", "America/New_York", "UTC"}
	for n, want := range map[int]string{1: "Europe/Berlin", 2: "America/New_York", 3: "UTC", 4: "Europe/Berlin"} {
		if got := cfg.timezone(n); got != want {
			t.Errorf("timezone of agent %d = %q, want %q (round robin)", n, got, want)
		}
	}
	if !cfg.canary(3) || cfg.canary(4) {
		t.Error("the first CanaryCount (3) agents are the canaries")
	}
}

func TestJitter(t *testing.T) {
	j := newJitter(1, 1)
	for range 1000 {
		if d := j.between(time.Second, 3*time.Second); d < time.Second || d > 3*time.Second {
			t.Fatalf("between 1s and 3s: %v", d)
		}
		if d := j.around(time.Second); d < 750*time.Millisecond || d > 1250*time.Millisecond {
			t.Fatalf("around 1s: %v", d)
		}
	}
	if d := j.between(time.Second, time.Second); d != time.Second {
		t.Errorf("an empty range gives its bound, got %v", d)
	}
	if a, b := newJitter(1, 1).between(0, time.Hour), newJitter(1, 1).between(0, time.Hour); a != b {
		t.Errorf("the same seed and agent draw the same delays: %v, %v", a, b)
	}
	for _, tc := range []struct {
		d     time.Duration
		speed float64
		want  time.Duration
	}{
		{d: 3 * time.Second, speed: 1, want: 3 * time.Second},         // real time
		{d: 3 * time.Second, speed: 100, want: 30 * time.Millisecond}, // demo in a hurry
		{d: time.Second, speed: 0.5, want: 2 * time.Second},           // slow motion
	} {
		if got := scale(tc.d, tc.speed); got != tc.want {
			t.Errorf("scale(%v, %v) = %v, want %v", tc.d, tc.speed, got, tc.want)
		}
	}
}

func TestPick_CollectorPackage(t *testing.T) {
	top := &protobufs.PackageAvailable{Type: protobufs.PackageType_PackageType_TopLevel, Version: "0.162.0"}
	addon := &protobufs.PackageAvailable{Type: protobufs.PackageType_PackageType_Addon, Version: "1.0.0"}
	for _, tc := range []struct {
		name     string
		config   string // Config.PackageName
		packages map[string]*protobufs.PackageAvailable
		want     string // picked name; "-" for none
	}{
		{name: "by name", config: "otelcol", packages: map[string]*protobufs.PackageAvailable{"otelcol": addon, "x": top}, want: "otelcol"}, // the configured name wins
		{name: "top-level", config: "", packages: map[string]*protobufs.PackageAvailable{"collector": top, "a": addon}, want: "collector"},  // else the top-level package
		{name: "only add-ons", config: "", packages: map[string]*protobufs.PackageAvailable{"a": addon}, want: "-"},                         // nothing to install
		{name: "no version", config: "", packages: map[string]*protobufs.PackageAvailable{"": {Type: top.Type}}, want: "-"},                 // an offer without version is no offer
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := DefaultConfig().normalize()
			cfg.PackageName = tc.config
			name := "-"
			if got := newAgent(cfg, 1).pick(&protobufs.PackagesAvailable{Packages: tc.packages}); got != nil {
				name = got.name
			}
			if name != tc.want {
				t.Errorf("picked %q, want %q", name, tc.want)
			}
		})
	}
}

// The slowest agent's times, as the demo's budget counts them: the worked
// examples of SlowestConfig and SlowestUpdate, and their scaling.
func TestDelays_Slowest(t *testing.T) {
	d := DefaultConfig().Delays
	if got := d.SlowestConfig(); got != 4875*time.Millisecond {
		t.Errorf("SlowestConfig of the defaults = %s, want 4.875s (3s apply, then 1.25 × 1.5s of restart)", got)
	}
	if got := d.SlowestUpdate(); got != 8125*time.Millisecond {
		t.Errorf("SlowestUpdate of the defaults = %s, want 8.125s (1.25 × (five 1s steps and 1.5s of restart))", got)
	}
	d.UpdateStep, d.Starting, d.Started = 2*time.Second, 0, 0
	if got := d.SlowestUpdate(); got != 12500*time.Millisecond {
		t.Errorf("SlowestUpdate with 2s steps and no restart = %s, want 12.5s", got)
	}
}
