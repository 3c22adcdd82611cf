// Command simfleet runs a simulated fleet of OpenTelemetry Collectors, each a
// real OpAMP client, against a Myriarch gateway until interrupted. It prints
// a summary of the fleet every -summary interval and when it stops.
//
//	go run ./examples/simfleet -n 50 -endpoint ws://127.0.0.1:4320/v1/opamp -token $TOKEN
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/local/simfleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "simfleet:", err)
		os.Exit(1)
	}
}

// options are the flags that are not simulation settings.
type options struct {
	summary  time.Duration
	logLevel slog.Level
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, opts, err := parse(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: opts.logLevel}))
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	var tick <-chan time.Time
	if opts.summary > 0 {
		ticker := time.NewTicker(opts.summary)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case <-tick:
			fmt.Fprintln(stdout, summarize(fleet.Snapshot()))
		case <-ctx.Done():
			err := fleet.Stop()
			fmt.Fprintln(stdout, summarize(fleet.Snapshot()))
			return err
		}
	}
}

// parse reads the flags into a simulation config; defaults are the demo's.
func parse(args []string, stderr io.Writer) (simfleet.Config, options, error) {
	cfg, opts := simfleet.DefaultConfig(), options{}
	fs := flag.NewFlagSet("simfleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.N, "n", cfg.N, "number of agents")
	fs.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "OpAMP endpoint: ws://, wss://, http:// or https://")
	// The token's default is read after parsing, so that -help never prints it.
	fs.StringVar(&cfg.Token, "token", "", "bearer token (default $MYRIARCH_AGENT_TOKEN)")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "keep each collector's configuration and version here across runs, as the OpAMP supervisor does")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of instance UIDs, delays and failure draws")
	fs.StringVar(&cfg.StartVersion, "version", cfg.StartVersion, "collector version at start (service.version)")
	fs.StringVar(&cfg.ServiceName, "service-name", cfg.ServiceName, "service.name")
	fs.StringVar(&cfg.Fleet, "fleet", cfg.Fleet, "value of the attribute labels.fleet")
	fs.IntVar(&cfg.CanaryCount, "canaries", cfg.CanaryCount, "agents 1..N with labels.wave=canary")
	timezones := fs.String("timezones", strings.Join(cfg.Timezones, ","), "site.timezone values, assigned round robin")
	zones := fs.String("zones", "", "region/zone pairs, assigned round robin, e.g. eu-west-1/eu-west-1a,us-east-1/us-east-1a")
	fs.StringVar(&cfg.PackageName, "package", cfg.PackageName, `OpAMP package name of the collector ("" = top-level)`)
	failAgents := fs.String("fail", "", "agent numbers that fail, e.g. 4,17")
	fs.Float64Var(&cfg.FailProbability, "fail-probability", 0, "probability that any other agent fails")
	failMode := fs.String("fail-mode", string(cfg.FailMode), "how failing agents fail a marked configuration: reject or unhealthy")
	fs.StringVar(&cfg.FailMarker, "fail-marker", cfg.FailMarker, "configurations containing it fail on failing agents")
	failVersions := fs.String("fail-versions", "", "versions failing agents cannot install, e.g. 0.163.0")
	fs.Float64Var(&cfg.Speed, "speed", cfg.Speed, "divides every delay (10 = ten times faster)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat", cfg.Heartbeat, "heartbeat (WebSocket) or poll interval (HTTP)")
	fs.DurationVar(&cfg.Delays.ApplyMin, "apply-min", cfg.Delays.ApplyMin, "shortest APPLYING → APPLIED")
	fs.DurationVar(&cfg.Delays.ApplyMax, "apply-max", cfg.Delays.ApplyMax, "longest APPLYING → APPLIED")
	fs.DurationVar(&cfg.Delays.Starting, "starting", cfg.Delays.Starting, "restart → StatusStarting")
	fs.DurationVar(&cfg.Delays.Started, "started", cfg.Delays.Started, "StatusStarting → StatusOK")
	fs.DurationVar(&cfg.Delays.UpdateStep, "update-step", cfg.Delays.UpdateStep, "duration of each updater step")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve the collectors' pipeline metrics for Prometheus here at /metrics, e.g. 127.0.0.1:9464")
	fs.Float64Var(&cfg.SpansPerSecond, "spans-per-second", cfg.SpansPerSecond, "spans each collector receives and exports per second")
	fs.BoolVar(&cfg.HealthCheck, "health-check", false, "every agent serves a health check on a port of its own (attribute "+simfleet.ProbeAttribute+")")
	fs.StringVar(&cfg.ExportFailure.Marker, "export-fail-marker", "", "configurations containing it make exports fail in -export-fail-where")
	fs.StringVar(&cfg.ExportFailure.Where, "export-fail-where", "", `region/zone or region whose agents fail exports ("" = all)`)
	fs.Float64Var(&cfg.ExportFailure.Fraction, "export-fail-fraction", 0, "share of the spans that fail there (0 = all)")
	fs.DurationVar(&opts.summary, "summary", 10*time.Second, "print a fleet summary this often (0 = only at the end)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return cfg, opts, err
	}
	if fs.NArg() > 0 {
		return cfg, opts, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.Token == "" {
		cfg.Token = os.Getenv("MYRIARCH_AGENT_TOKEN")
	}
	cfg.Timezones = list(*timezones)
	cfg.Zones = list(*zones)
	cfg.FailMode = simfleet.FailMode(*failMode)
	cfg.FailVersions = list(*failVersions)
	for _, s := range list(*failAgents) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return cfg, opts, fmt.Errorf("-fail: %q is not an agent number", s)
		}
		cfg.FailAgents = append(cfg.FailAgents, n)
	}
	if err := opts.logLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return cfg, opts, fmt.Errorf("-log-level: %w", err)
	}
	return cfg, opts, nil
}

// list splits a comma-separated flag, dropping empty items.
func list(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// summarize is one line: connected agents, versions, configuration statuses,
// unhealthy and busy agents.
// Example: "connected 50/50 · versions 0.161.0=47 0.162.0=3 · config APPLIED=50 · unhealthy 0 · busy 3"
func summarize(states []simfleet.AgentState) string {
	versions, configs := map[string]int{}, map[string]int{}
	connected, unhealthy, busy := 0, 0, 0
	for _, s := range states {
		versions[s.Version]++
		if s.ConfigStatus != "" {
			configs[s.ConfigStatus]++
		}
		if s.Connected {
			connected++
		}
		if !s.Healthy {
			unhealthy++
		}
		if s.Busy {
			busy++
		}
	}
	return fmt.Sprintf("connected %d/%d · versions %s · config %s · unhealthy %d · busy %d",
		connected, len(states), counts(versions), counts(configs), unhealthy, busy)
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
