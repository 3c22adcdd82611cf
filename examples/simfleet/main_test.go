package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/simfleet"
)

func TestParse(t *testing.T) {
	cfg, opts, err := parse([]string{
		"-n", "5", "-endpoint", "http://h:1/v1/opamp", "-token", "t", "-timezones", "UTC, Asia/Tokyo",
		"-fail", "2,4", "-fail-mode", "unhealthy", "-fail-versions", "0.163.0", "-speed", "10", "-summary", "0", "-log-level", "debug",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 5 || cfg.Endpoint != "http://h:1/v1/opamp" || cfg.Token != "t" || !slices.Equal(cfg.Timezones, []string{"UTC", "Asia/Tokyo"}) ||
		!slices.Equal(cfg.FailAgents, []int{2, 4}) || cfg.FailMode != simfleet.FailUnhealthy || !slices.Equal(cfg.FailVersions, []string{"0.163.0"}) ||
		cfg.Speed != 10 || opts.summary != 0 || opts.logLevel.String() != "DEBUG" {
		t.Errorf("parsed %+v %+v", cfg, opts)
	}
	if cfg.CanaryCount != 3 || cfg.StartVersion != "0.161.0" || cfg.Delays.ApplyMax != 3*time.Second {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

// The collectors' metrics, health checks and a zone's export failure are
// off unless asked for.
func TestParse_Telemetry(t *testing.T) {
	cfg, _, err := parse(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MetricsAddr != "" || cfg.HealthCheck || cfg.ExportFailure != (simfleet.ExportFailure{}) || len(cfg.Zones) != 0 {
		t.Errorf("telemetry on by default: %+v", cfg)
	}
	cfg, _, err = parse([]string{
		"-zones", "eu-west-1/eu-west-1a,us-east-1/us-east-1a", "-metrics-addr", "127.0.0.1:9464", "-spans-per-second", "50",
		"-health-check", "-export-fail-marker", "# exporter-fail", "-export-fail-where", "eu-west-1",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := simfleet.ExportFailure{Marker: "# exporter-fail", Where: "eu-west-1"} // all spans fail
	if !slices.Equal(cfg.Zones, []string{"eu-west-1/eu-west-1a", "us-east-1/us-east-1a"}) || cfg.MetricsAddr != "127.0.0.1:9464" ||
		cfg.SpansPerSecond != 50 || !cfg.HealthCheck || cfg.ExportFailure != want {
		t.Errorf("parsed %+v", cfg)
	}
}

func TestParse_Refuses(t *testing.T) {
	for _, args := range [][]string{
		{"-fail", "x"},         // not a number
		{"-log-level", "loud"}, // not a level
		{"extra"},              // no arguments
		{"-nope"},              // unknown flag
	} {
		if _, _, err := parse(args, io.Discard); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
}

func TestSummarize(t *testing.T) {
	got := summarize([]simfleet.AgentState{
		{Connected: true, Version: "0.161.0", Healthy: true, ConfigStatus: "APPLIED"},
		{Connected: true, Version: "0.162.0", Healthy: false, Busy: true},
		{Version: "0.161.0", Healthy: true, ConfigStatus: "FAILED"},
	})
	want := "connected 2/3 · versions 0.161.0=2 0.162.0=1 · config APPLIED=1 FAILED=1 · unhealthy 1 · busy 1"
	if got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(summarize(nil), "config -") {
		t.Error("an empty fleet has no config statuses")
	}
}

// run starts the fleet and, once interrupted, stops it and prints a summary.
func TestRun_StopsOnInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // interrupted at once; nobody listens on port 1 anyway
	var out strings.Builder
	if err := run(ctx, []string{"-n", "2", "-endpoint", "ws://127.0.0.1:1/v1/opamp", "-summary", "0"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "connected 0/2 · versions 0.161.0=2") {
		t.Errorf("final summary %q", out.String())
	}
}

// The agent token comes from the environment when -token is not given, and
// -help never prints it.
func TestParse_TokenFromEnvironmentNeverPrinted(t *testing.T) {
	t.Setenv("MYRIARCH_AGENT_TOKEN", "sentinel-agent-token")
	var help strings.Builder
	if _, _, err := parse([]string{"-help"}, &help); err == nil || strings.Contains(help.String(), "sentinel-agent-token") {
		t.Fatalf("-help: %v, printed the token or no usage:\n%s", err, help.String())
	}
	cfg, _, err := parse([]string{"-state-dir", "state"}, io.Discard)
	if err != nil || cfg.Token != "sentinel-agent-token" || cfg.StateDir != "state" {
		t.Fatalf("%v: token %q, state dir %q", err, cfg.Token, cfg.StateDir)
	}
}
