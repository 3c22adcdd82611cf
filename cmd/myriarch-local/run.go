package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/stack"
)

// runOptions are the settings of `run` besides the stack's.
type runOptions struct {
	agents     int
	speed      float64
	metrics    net.Listener // the fleet's metrics, which Prometheus scrapes
	data       string
	tokensFile string
}

// serve keeps the stack running, with a simulated fleet unless agents is
// 0, until ctx ends (Ctrl-C, SIGTERM).
func serve(ctx context.Context, s *stack.Stack, o runOptions, sd *shutdown, stdout, stderr io.Writer) int {
	if o.agents > 0 {
		cfg := simfleet.DefaultConfig()
		cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = o.agents, s.GatewayURL, s.AgentToken, o.speed
		cfg.Zones = stack.DemoZones
		cfg.MetricsListener = o.metrics
		if o.data != "" {
			// The collectors keep their configuration and version as the
			// OpAMP supervisor does, so that a restart finds them as they were.
			cfg.StateDir = filepath.Join(o.data, "fleet")
		}
		fleet, err := simfleet.Start(ctx, cfg)
		if err != nil {
			fmt.Fprintln(stderr, "myriarch-local: start the simulated fleet:", err)
			return 1
		}
		sd.add(func(say reporter) { say(partFleet, fleet.Stop(), fmt.Sprintf("%d collectors", o.agents)) })
		fmt.Fprintf(stdout, "  Simulated fleet   %d collectors (otelcol-contrib %s, fleet label %q) in %v; metrics on %s\n",
			o.agents, cfg.StartVersion, cfg.Fleet, cfg.Zones, o.metrics.Addr())
	} else {
		fmt.Fprintln(stdout, "  Simulated fleet   none (-agents 0): connect your own OpAMP agents to the gateway")
	}
	if o.data != "" {
		fmt.Fprintf(stdout, "  State             kept in %s (tokens in %s): restart with the same DATA to go on\n", o.data, o.tokensFile)
	} else if o.tokensFile != "" {
		fmt.Fprintf(stdout, "  Tokens            in %s\n", o.tokensFile)
	}
	fmt.Fprintf(stdout, "Paste this line into another terminal to use myrctl there (README: Explore it):\n%s\n", exportLine(s))
	fmt.Fprintln(stdout, "Running; Ctrl-C stops the stack.")
	<-ctx.Done()
	fmt.Fprintln(stdout, "Stopping.")
	return 0
}

// loadTokens reads the tokens of an earlier run; a missing file is fine
// (the minted tokens are written to it once the stack runs).
func loadTokens(o *stack.Options, file string) error {
	if file == "" {
		return nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var t stack.Tokens
	if err := json.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("tokens file %s: %w", file, err)
	}
	if t.Admin == "" || t.Operator == "" || t.Viewer == "" || t.Agent == "" {
		return fmt.Errorf("tokens file %s: admin, operator, viewer and agent are all required", file)
	}
	o.Tokens = t // the stack takes the agent token from it too
	return nil
}

// saveTokens writes the tokens, readable by the owner only.
func saveTokens(file string, t stack.Tokens) error {
	b, _ := json.MarshalIndent(t, "", "  ")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o600)
}
