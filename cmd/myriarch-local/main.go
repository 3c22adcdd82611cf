// Command myriarch-local runs Myriarch on one machine (see pkg/stack): run
// it through scripts/with-dynamodb-local.sh, which starts DynamoDB Local
// around it (make run, make demo).
//
//	myriarch-local run    start the stack and keep it running (Ctrl-C stops it)
//	myriarch-local demo   start the stack, run the demo scenario, print a summary
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/pkg/stack"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "run" && args[0] != "demo") {
		fmt.Fprintln(stderr, "usage: myriarch-local run|demo [flags]")
		return 2
	}
	mode := args[0]
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := stack.Options{Clock: time.Now}
	fs.StringVar(&o.APIAddr, "api", "127.0.0.1:8080", "REST API address")
	fs.StringVar(&o.GatewayAddr, "gateway", "127.0.0.1:4320", "OpAMP gateway address")
	fs.StringVar(&o.SFNAddr, "sfn", "127.0.0.1:8083", "local Step Functions endpoint address")
	agents := fs.Int("agents", 50, "demo: simulated collectors")
	speed := fs.Float64("speed", 1, "demo: divides the simulated agents' delays")
	healthWait := fs.String("health-wait", "", "demo: override the demo policies' healthWait (30s)")
	version := fs.String("version", "0.162.0", "demo: the collector version to roll out")
	timeout := fs.Duration("timeout", 15*time.Minute, "demo: give up after this long")
	metricsTarget := fs.String("metrics-target", "127.0.0.1:9464", "run: the simulated fleet's metrics address Prometheus scrapes (examples/simfleet -metrics-addr)")
	fs.StringVar(&o.EventsWebhook, "events-webhook", os.Getenv("MYRIARCH_EVENTS_WEBHOOK"), "a URL that receives every rollout notification as a POST (env MYRIARCH_EVENTS_WEBHOOK)")
	verbose := fs.Bool("v", false, "log at info level (a line per rollout notification, among others)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	o.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	target := *metricsTarget
	if mode == "demo" {
		addr, err := freeAddr()
		if err != nil {
			fmt.Fprintln(stderr, "myriarch-local:", err)
			return 1
		}
		target = addr
	}
	gates, err := startGateServers(target, mode == "demo", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "myriarch-local:", err)
		return 1
	}
	defer gates.stop()
	o.PrometheusURL, o.AlertmanagerURL = gates.url(gates.prometheus), gates.url(gates.alertmanager)
	s, err := stack.Start(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "myriarch-local:", err)
		return 1
	}
	defer s.Stop()
	printEndpoints(stdout, s)
	fmt.Fprintf(stdout, "  Prometheus        %s   (scrapes %s)\n  Alertmanager      %s\n", or(o.PrometheusURL, "not running"), target, or(o.AlertmanagerURL, "not running"))
	fmt.Fprintf(stdout, "  Notifications     myrctl events --follow   (webhook %s)\n", or(o.EventsWebhook, "none: set MYRIARCH_EVENTS_WEBHOOK"))
	if mode == "run" {
		fmt.Fprintln(stdout, "Running; Ctrl-C stops the stack.")
		<-ctx.Done()
		return 0
	}
	sum, err := s.Demo(ctx, stack.DemoOptions{Revision: "examples/quickstart", Agents: *agents, Speed: *speed,
		HealthWait: *healthWait, NewVersion: *version, MetricsAddr: target, Timeout: *timeout, Out: stdout})
	if err != nil {
		fmt.Fprintln(stderr, "demo failed:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nSummary: %d rollouts completed, %d targets succeeded, %d rollout stopped by a red gate and rolled back, wall time %s\n",
		sum.RolloutsCompleted, sum.TargetsSucceeded, sum.RolloutsRolledBack, sum.Wall.Round(time.Second))
	return 0
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func printEndpoints(w io.Writer, s *stack.Stack) {
	fmt.Fprintf(w, `Myriarch local stack
  REST API          %s/api/v1   (export MYRIARCH_API=%s MYRIARCH_TOKEN=%s)
  Operator token    %s   (approves rollouts: nobody approves a rollout they started)
  Viewer token      %s   (reads only)
  Web page          %s/ui/   (sign in with one of the tokens above)
  OpAMP gateway     %s   (agent token %s)
  Step Functions    %s   (aws --endpoint-url %s stepfunctions list-executions --state-machine-arn %s)
  DynamoDB Local    %s
`, s.APIURL, s.APIURL, s.AdminToken, s.OperatorToken, s.ViewerToken, s.APIURL, s.GatewayURL, s.AgentToken, s.SFNURL, s.SFNURL, s.StateMachineArn, os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"))
}
