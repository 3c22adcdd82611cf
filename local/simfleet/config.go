// Package simfleet simulates a fleet of OpenTelemetry Collectors managed over
// OpAMP, for the local stack and `make demo`. Every simulated agent is a real
// OpAMP client (opamp-go): it reports what the collector's supervisor and the
// myriarch-updater report, applies remote configurations and takes package
// offers, with short delays and an optional failure mode. The shapes it sends
// are documented in README.md.
package simfleet

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"
)

// FailMode is how a failing agent fails a configuration that carries the
// failure marker.
type FailMode string

const (
	// FailReject reports the remote configuration as FAILED with an error.
	FailReject FailMode = "reject"
	// FailUnhealthy applies the configuration, restarts, reports StatusOK
	// and then turns unhealthy (StatusRecoverableError with lastError).
	FailUnhealthy FailMode = "unhealthy"
)

// DefaultFailMarker is the line that makes failing agents fail a configuration.
const DefaultFailMarker = "# simfleet: fail"

// Config describes the simulated fleet. Agents are numbered 1..N; the number
// is the one in the host name (sim-01) and the one FailAgents refers to.
type Config struct {
	N        int    // number of agents
	Endpoint string // ws://, wss://, http:// or https:// URL of the OpAMP server
	Token    string // sent as "Authorization: Bearer <token>"; none when empty
	Seed     int64  // derives instance UIDs, jitter and FailProbability draws

	ServiceName  string   // service.name
	StartVersion string   // collector version every agent runs at start, e.g. 0.161.0
	Fleet        string   // value of the attribute labels.fleet
	CanaryCount  int      // agents 1..CanaryCount carry labels.wave=canary
	Timezones    []string // site.timezone, assigned round robin
	// Zones, if set, are "<region>/<zone>" pairs assigned round robin to the
	// agents as cloud.region and cloud.availability_zone (the OpenTelemetry
	// resource attributes that topology waves split by).
	Zones       []string
	PackageName string // OpAMP package name of the collector ("" = top-level)
	// NoHealthReports makes the agents play the opamp-go example agent: they
	// do not declare ReportsHealth and send no health, so rollouts judge them
	// by their connection and their reports alone.
	NoHealthReports bool

	FailAgents      []int    // agent numbers that fail
	FailProbability float64  // every other agent fails with this probability (0..1)
	FailMode        FailMode // how a failing agent fails a configuration
	FailMarker      string   // configurations containing it fail on failing agents
	FailVersions    []string // offered versions that failing agents cannot install

	Delays    Delays
	Speed     float64       // delays are divided by it; <= 0 means 1
	Heartbeat time.Duration // OpAMP heartbeat (WebSocket; 0 disables) or poll interval (HTTP)

	// What the collectors show besides OpAMP, for health gates. Off by
	// default: each listens on a port.
	MetricsAddr string // listen address of the fleet's Prometheus /metrics, e.g. 127.0.0.1:0; "" = none
	// MetricsListener, if set, serves the metrics instead of a listener on
	// MetricsAddr: a caller that must name the address to a scraper before
	// the fleet starts opens it itself, so that no other process takes the
	// port in between. The fleet closes it when it stops.
	MetricsListener net.Listener
	SpansPerSecond  float64       // spans each collector receives and exports while it runs; 0 means 100
	HealthCheck     bool          // each agent serves a health_check at its ProbeAttribute address
	ExportFailure   ExportFailure // exports that a marked configuration breaks

	// StateDir, if set, keeps each collector's version, effective
	// configuration and last remote configuration status across runs, as
	// the OpAMP supervisor's storage directory does (a file per agent).
	StateDir string

	Clock  Clock        // nil means RealClock()
	Logger *slog.Logger // nil discards
}

// Delays are the simulated durations at speed 1. Restart and update steps
// vary by ±25 % per agent (seeded), the apply delay is uniform in its range.
type Delays struct {
	ApplyMin   time.Duration // APPLYING → APPLIED or FAILED, at least
	ApplyMax   time.Duration // ... at most
	Starting   time.Duration // restart (healthy=false, no status) → StatusStarting
	Started    time.Duration // StatusStarting → StatusOK; StatusOK → unhealthy in FailUnhealthy
	UpdateStep time.Duration // each step of the updater
}

// SlowestConfig is the longest a configuration takes an agent at speed 1,
// from the offer to the healthy report after its restart (applyConfig):
// the longest apply delay, then the restart's two steps at their +25 %.
// Example, the defaults: 3s + 1.25 × (0.5s + 1s) = 4.875s.
func (d Delays) SlowestConfig() time.Duration { return d.ApplyMax + (d.Starting+d.Started)*5/4 }

// SlowestUpdate is the longest a version update takes an agent at speed 1
// (install): the updater's five steps (offered, downloading in two halves,
// verifying, installing, health check) and the restart, each at +25 %.
// Example, the defaults: 1.25 × (5 × 1s + 0.5s + 1s) = 8.125s.
func (d Delays) SlowestUpdate() time.Duration {
	return (5*d.UpdateStep + d.Starting + d.Started) * 5 / 4
}

// defaultSpansPerSecond is each collector's traffic: 100 spans/s.
const defaultSpansPerSecond = 100

// DefaultConfig is the demo fleet: 50 agents of otelcol-contrib 0.161.0 in
// fleet edge with 3 canaries, against the local gateway.
func DefaultConfig() Config {
	return Config{
		N:            50,
		Endpoint:     "ws://127.0.0.1:4320/v1/opamp",
		Seed:         1,
		ServiceName:  "otelcol-contrib",
		StartVersion: "0.161.0",
		Fleet:        "edge",
		CanaryCount:  3,
		Timezones:    []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"},
		FailMode:     FailReject,
		FailMarker:   DefaultFailMarker,
		Delays: Delays{
			ApplyMin: time.Second, ApplyMax: 3 * time.Second,
			Starting: 500 * time.Millisecond, Started: time.Second,
			UpdateStep: time.Second,
		},
		Speed:          1,
		Heartbeat:      30 * time.Second,
		SpansPerSecond: defaultSpansPerSecond,
	}
}

// normalize checks cfg and fills what may be left empty.
func (cfg Config) normalize() (Config, error) {
	var errs []error
	if cfg.N < 1 {
		errs = append(errs, fmt.Errorf("n is %d, want at least 1", cfg.N))
	}
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("endpoint: %w", err))
	case u.Scheme == "http" || u.Scheme == "https":
		if cfg.Heartbeat <= 0 {
			errs = append(errs, errors.New("heartbeat is the poll interval of HTTP and must be positive"))
		}
	case u.Scheme != "ws" && u.Scheme != "wss":
		errs = append(errs, fmt.Errorf("endpoint %q: scheme must be ws, wss, http or https", cfg.Endpoint))
	}
	if cfg.StartVersion == "" {
		errs = append(errs, errors.New("start version is empty"))
	}
	if cfg.FailProbability < 0 || cfg.FailProbability > 1 {
		errs = append(errs, fmt.Errorf("fail probability %v is outside 0..1", cfg.FailProbability))
	}
	if cfg.FailMode != FailReject && cfg.FailMode != FailUnhealthy && cfg.FailMode != "" {
		errs = append(errs, fmt.Errorf("fail mode %q: want %s or %s", cfg.FailMode, FailReject, FailUnhealthy))
	}
	for _, n := range cfg.FailAgents {
		if n < 1 || n > cfg.N {
			errs = append(errs, fmt.Errorf("fail agent %d is outside 1..%d", n, cfg.N))
		}
	}
	if cfg.Delays.ApplyMax < cfg.Delays.ApplyMin {
		errs = append(errs, fmt.Errorf("apply delay range %v..%v is reversed", cfg.Delays.ApplyMin, cfg.Delays.ApplyMax))
	}
	if cfg.SpansPerSecond < 0 {
		errs = append(errs, fmt.Errorf("spans per second %v is negative", cfg.SpansPerSecond))
	}
	errs = append(errs, cfg.ExportFailure.check(cfg.Zones)...)
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("simfleet config: %w", err)
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "otelcol-contrib"
	}
	if len(cfg.Timezones) == 0 {
		cfg.Timezones = []string{"UTC"}
	}
	if cfg.FailMode == "" {
		cfg.FailMode = FailReject
	}
	if cfg.FailMarker == "" {
		cfg.FailMarker = DefaultFailMarker
	}
	if cfg.SpansPerSecond == 0 {
		cfg.SpansPerSecond = defaultSpansPerSecond
	}
	if cfg.ExportFailure.Marker != "" && cfg.ExportFailure.Fraction == 0 {
		cfg.ExportFailure.Fraction = 1
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// websocket reports whether the endpoint is a WebSocket URL (else plain HTTP).
func (cfg Config) websocket() bool {
	u, err := url.Parse(cfg.Endpoint)
	return err == nil && (u.Scheme == "ws" || u.Scheme == "wss")
}
