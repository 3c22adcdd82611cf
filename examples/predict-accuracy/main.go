// Command predict-accuracy measures how well plans predict the finish of
// rollouts: it starts the local stack (run it through
// scripts/with-dynamodb-local.sh), connects a simulated fleet, gives the
// fleet a history of apply times with a first rollout, and then, for each
// scenario, asks POST /api/v1/plans with the revision it is about to
// apply, applies it, approves what waits for approval as an operator
// would, and compares the predicted finish with the actual one.
//
//	scripts/with-dynamodb-local.sh go run ./examples/predict-accuracy
//
// The scenarios: rounds of maxConcurrent; a canary and an approval given
// some seconds after it is asked; a maintenance window that opens a
// minute after the plan; stages by zone with a bake; a health wait longer
// than the state machine's 10s tick, where the apply times' spread shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/local/stack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "predict-accuracy:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("predict-accuracy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agents := fs.Int("agents", 12, "simulated collectors (agent 1 is the canary; zones alternate)")
	speed := fs.Float64("speed", 10, "divides the simulated agents' delays")
	revisionDir := fs.String("revision", "examples/quickstart", "the quickstart revision directory")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	s, err := stack.Start(ctx, stack.Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "accuracy-", Clock: time.Now, PlannerEvery: time.Hour,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		return err
	}
	defer s.Stop()
	ms, err := s.MeasurePredictions(ctx, stack.AccuracyOptions{Revision: *revisionDir, Agents: *agents, Speed: *speed, Cases: scenarios(), Out: stdout,
		Zones: []string{"eu-1/eu-1a", "eu-1/eu-1b"}})
	if err != nil {
		return err
	}
	report(stdout, ms)
	return nil
}

const canaryThenRest = "  waves:\n    - {name: canary, selector: {matchAttributes: {labels.wave: canary}}}\n    - {name: rest, percent: 100, requireApproval: true}\n"

func scenarios() []stack.PredictionCase {
	fixed := func(spec string) func(time.Time) string { return func(time.Time) string { return spec } }
	return []stack.PredictionCase{
		{Name: "rounds", Spec: fixed("  waves: [{name: all, percent: 100}]\n  maxConcurrent: 3\n  healthWait: 2s\n")},
		{Name: "approval", ApproveAfter: 5 * time.Second, Spec: fixed(canaryThenRest + "  maxConcurrent: 4\n  healthWait: 2s\n")},
		{Name: "window", Spec: windowSpec},
		{Name: "stages", Spec: fixed("  waves: [{name: all, percent: 100, by: zone, bake: 5s}]\n  maxConcurrent: 0\n  maxUnavailable: 100%\n  healthWait: 2s\n")},
		{Name: "long health wait", Spec: fixed("  waves: [{name: all, percent: 100}]\n  maxConcurrent: 4\n  healthWait: 12s\n")},
	}
}

// windowSpec is a daily window (UTC) that opens at the first whole minute
// at least a minute after now and lasts half an hour.
func windowSpec(now time.Time) string {
	open := now.UTC().Add(time.Minute).Truncate(time.Minute).Add(time.Minute)
	end := open.Add(30 * time.Minute)
	return fmt.Sprintf("  waves: [{name: all, percent: 100}]\n  maxConcurrent: 0\n  healthWait: 2s\n"+
		"  maintenanceWindows: [{start: %q, end: %q, timezone: UTC}]\n", open.Format("15:04"), end.Format("15:04"))
}

// report is a table of the measurements and the mean absolute error.
func report(w io.Writer, ms []stack.Measurement) {
	fmt.Fprintln(w, "\n| scenario | modelled | predicted | actual | error | error % | apply median / p90 (samples) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	var sumAbs, sumPct float64
	for _, m := range ms {
		fmt.Fprintf(w, "| %s | %.1fs | %s | %s | %+.2fs | %+.2f%% | %.2fs / %.2fs (%d) |\n", m.Name, m.Modelled.Seconds(),
			m.Predicted.Format("15:04:05.0"), m.Actual.Format("15:04:05.0"), m.Error.Seconds(), m.Percent, m.Apply.Median, m.Apply.P90, m.Apply.Samples)
		sumAbs += math.Abs(m.Error.Seconds())
		sumPct += math.Abs(m.Percent)
	}
	if n := float64(len(ms)); n > 0 {
		fmt.Fprintf(w, "\nmean absolute error %.2fs (%.2f%%) over %d rollouts\n", sumAbs/n, sumPct/n, len(ms))
	}
}
