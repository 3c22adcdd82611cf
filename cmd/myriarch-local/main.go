// Command myriarch-local runs Myriarch on one machine (see local/stack): run
// it through scripts/with-dynamodb-local.sh, which starts DynamoDB Local
// around it (make run, make demo).
//
//	myriarch-local run    start the stack and a simulated fleet, keep them running (Ctrl-C or SIGTERM stops them)
//	myriarch-local demo   start the stack, run the demo scenario, print a summary
//	myriarch-local token  add a person with a new token to a token table file (make run reads it from MYRIARCH_TOKENS_FILE)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/local/stack"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// flagOf names, for each service, the flag and the make variable that
// choose its address.
var flagOf = map[string]string{"api": "-api ADDR (make run API=ADDR)", "gateway": "-gateway ADDR (make run GATEWAY=ADDR)", "sfn": "-sfn ADDR (make run SFN=ADDR)"}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "token" {
		return addPerson(args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "run" && args[0] != "demo") {
		fmt.Fprintln(stderr, "usage: myriarch-local run|demo|token [flags]")
		return 2
	}
	mode := args[0]
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := stack.Options{Clock: time.Now}
	fs.StringVar(&o.APIAddr, "api", "127.0.0.1:8080", "REST API address (make API=…)")
	fs.StringVar(&o.GatewayAddr, "gateway", "127.0.0.1:4320", "OpAMP gateway address (make GATEWAY=…)")
	fs.StringVar(&o.SFNAddr, "sfn", "127.0.0.1:8083", "local Step Functions endpoint address (make SFN=…)")
	agents := fs.Int("agents", 0, "simulated collectors (demo: 50; run: 20, and 0 for none: bring your own OpAMP agents)")
	speed := fs.Float64("speed", 0, "divides the simulated agents' delays (run: 1; demo: 4)")
	healthWait := fs.String("health-wait", "", "demo: every demo policy's healthWait (default: "+stack.DemoHealthWait+", and "+stack.DemoZoneHealthWait+" in the rollouts by zone)")
	since := fs.String("since", "", "demo: count the printed times from this Unix time in seconds (make demo passes its own start, so that they include the build and DynamoDB Local's start)")
	version := fs.String("version", "0.162.0", "demo: the collector version to roll out")
	timeout := fs.Duration("timeout", 15*time.Minute, "demo: give up after this long")
	metricsTarget := fs.String("metrics-target", "127.0.0.1:9464", "run: where the simulated fleet serves its metrics, which Prometheus scrapes")
	data := fs.String("data", os.Getenv(envData), "run: keep the state in this directory across restarts (make run DATA=…; env "+envData+")")
	tokensFile := fs.String("tokens", "", "run: read the tokens from this file, or write the minted ones to it (default <data>/tokens.json with -data)")
	// The package source of the gateway, under the gateway binary's own
	// variables: what a myriarch-updater beside a collector of yours is
	// offered (docs/updater.md).
	fs.StringVar(&o.Packages.DownloadURL, "download-url", os.Getenv("MYRIARCH_GATEWAY_DOWNLOAD_URL"), "package URL template with {version} {os} {arch} (env MYRIARCH_GATEWAY_DOWNLOAD_URL)")
	fs.StringVar(&o.Packages.ChecksumsURL, "package-checksums-url", os.Getenv("MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL"), "a release's checksums file URL template (env MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL)")
	fs.StringVar(&o.Packages.SignatureURL, "package-signature-url", os.Getenv("MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL"), "an archive's minisign signature URL template (env MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL)")
	fs.StringVar(&o.EventsWebhook, "events-webhook", os.Getenv("MYRIARCH_EVENTS_WEBHOOK"), "a URL that receives every rollout notification as a POST (env MYRIARCH_EVENTS_WEBHOOK)")
	gatewayProcess := fs.Bool("gateway-process", false, "run the OpAMP gateway as its own process (the opamp-gateway binary), which can be killed and started again on its own (make run GATEWAY_PROCESS=1)")
	fs.StringVar(&o.GatewayBinary, "gateway-binary", "", "with -gateway-process: the opamp-gateway binary (default: opamp-gateway next to this binary, bin/opamp-gateway)")
	verbose := fs.Bool("v", false, "log at info level (a line per rollout notification, among others)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	t0, err := startedAt(*since, time.Now)
	if err != nil {
		fmt.Fprintln(stderr, "myriarch-local: -since:", err)
		return 2
	}
	if *agents == 0 && !flagSet(fs, "agents") {
		*agents = map[string]int{"run": 20, "demo": 50}[mode]
	}
	if *gatewayProcess && o.GatewayBinary == "" {
		o.GatewayBinary = besideExecutable("opamp-gateway")
	} else if !*gatewayProcess {
		o.GatewayBinary = ""
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	o.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	fail := func(err error) int {
		var le *stack.ListenError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "myriarch-local: %v: choose another address with %s\n", err, flagOf[le.Service])
			return 1
		}
		var me *metricsError
		if errors.As(err, &me) {
			fmt.Fprintf(stderr, "myriarch-local: %v: choose another address with -metrics-target ADDR (make run METRICS=ADDR), or start no fleet with -agents 0 (make run AGENTS=0)\n", err)
			return 1
		}
		fmt.Fprintln(stderr, "myriarch-local:", err)
		return 1
	}

	people, peopleFrom, err := loadPeople(os.Getenv)
	if err != nil {
		return fail(err)
	}
	o.People = people
	if mode == "run" {
		if err := keepState(&o, *data); err != nil {
			return fail(err)
		}
		if *tokensFile == "" && *data != "" {
			*tokensFile = filepath.Join(*data, "tokens.json")
		}
		if err := loadTokens(&o, *tokensFile); err != nil {
			return fail(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop() // after the shutdown: a second Ctrl-C does not cut it short
	var sd shutdown
	defer func() { sd.run(stdout, ctx.Err() != nil) }()
	// Every address is checked before anything is printed or started: a
	// busy one is refused with no half banner above the error.
	if err := stack.CheckAddresses(o); err != nil {
		return fail(err)
	}
	metrics, err := fleetMetrics(mode, *agents, *metricsTarget)
	if err != nil {
		return fail(err)
	}
	target := *metricsTarget
	if metrics != nil {
		sd.add(func(reporter) { _ = metrics.Close() })
		target = metrics.Addr().String()
	}
	phase := func(string) {}
	if mode == "demo" {
		phase = func(what string) { fmt.Fprintf(stdout, "[%5.1fs] %s\n", time.Since(t0).Seconds(), what) }
		if *since != "" {
			phase("bin/myriarch-local starts (after its build and DynamoDB Local's start)")
		}
	}
	prometheus, alertmanager := chooseGateSources(mode, os.Getenv)
	gates, err := startGateServers(prometheus, alertmanager, target, mode == "demo", stderr)
	if err != nil {
		return fail(err)
	}
	sd.add(gates.stop)
	phase("Prometheus and Alertmanager are up")
	o.PrometheusURL, o.AlertmanagerURL = gates.prometheus.url, gates.alertmanager.url
	s, err := stack.Start(ctx, o)
	if err != nil {
		return fail(err)
	}
	sd.add(func(say reporter) { s.StopReporting(stackPart(say)) })
	phase("the stack is up: tables, Step Functions, Lambdas, API, gateway, stream delivery")
	if mode == "run" && *tokensFile != "" {
		if err := saveTokens(*tokensFile, s.Tokens()); err != nil {
			return fail(err)
		}
	}
	printEndpoints(stdout, s)
	if len(people) > 0 {
		fmt.Fprintln(stdout, peopleLine(people, peopleFrom))
	}
	printGatewayProcess(stdout, s)
	printGateSources(stdout, gates.prometheus, gates.alertmanager, target)
	fmt.Fprintf(stdout, "  Notifications     myrctl events --follow   (webhook %s)\n", or(o.EventsWebhook, "none: set MYRIARCH_EVENTS_WEBHOOK"))
	if mode == "run" {
		return serve(ctx, s, runOptions{agents: *agents, speed: *speed, metrics: metrics, data: *data, tokensFile: *tokensFile}, &sd, stdout, stderr)
	}
	sum, err := s.Demo(ctx, stack.DemoOptions{Revision: "examples/quickstart", Agents: *agents, Speed: *speed,
		HealthWait: *healthWait, NewVersion: *version, MetricsAddr: target, MetricsListener: metrics, Timeout: *timeout, Out: stdout, Since: t0})
	if err != nil && ctx.Err() != nil {
		// Demo has stopped its fleet on its way out.
		fmt.Fprintln(stdout, "Stopping: the demo was interrupted.")
		fmt.Fprintln(stdout, stoppedLine(partFleet, nil, fmt.Sprintf("%d collectors", *agents)))
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "demo failed:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nSummary: %d rollouts completed, %d targets succeeded, %d rollout stopped by a red gate and rolled back\n",
		sum.RolloutsCompleted, sum.TargetsSucceeded, sum.RolloutsRolledBack)
	fmt.Fprintf(stdout, "Time: first rollout completed at %s, the demo ended at %s (%s)\n",
		sum.FirstCompleted.Round(time.Second), sum.Wall.Round(time.Second), origin(*since))
	return 0
}

// metricsError is an address the simulated fleet's metrics cannot be
// served on.
type metricsError struct {
	addr string
	err  error
}

func (e *metricsError) Error() string {
	return fmt.Sprintf("the simulated fleet's metrics cannot listen on %s: %v", e.addr, errors.Unwrap(e.err))
}

func (e *metricsError) Unwrap() error { return e.err }

// fleetMetrics opens the listener of the simulated fleet's metrics before
// Prometheus is told its address: the demo's on a free port, run's on
// -metrics-target; none for a run without simulated agents.
func fleetMetrics(mode string, agents int, target string) (net.Listener, error) {
	switch {
	case mode == "demo":
		target = "127.0.0.1:0"
	case agents == 0:
		return nil, nil
	}
	ln, err := net.Listen("tcp", target)
	if err != nil {
		return nil, &metricsError{addr: target, err: err}
	}
	return ln, nil
}

// startedAt is the moment the demo's times count from: since, a Unix time
// in seconds (make demo's start; a fraction counts to the millisecond), or
// now.
func startedAt(since string, now func() time.Time) (time.Time, error) {
	if since == "" {
		return now(), nil
	}
	sec, err := strconv.ParseFloat(since, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, fmt.Errorf("%q is not a Unix time in seconds", since)
	}
	return time.UnixMilli(int64(math.Round(sec * 1e3))), nil
}

// origin says what the demo's times count from, for its last line.
func origin(since string) string {
	if since == "" {
		return "since bin/myriarch-local started"
	}
	return "since make demo started, the build and DynamoDB Local's start included"
}

// envData is the data directory of make run DATA=…; scripts/with-dynamodb-local.sh
// keeps DynamoDB Local's database in its dynamodb/ subdirectory.
const envData = "MYRIARCH_DATA"

// keepState points the stack at the state of an earlier run: the tables
// DynamoDB Local keeps on disk, and the tokens of that run.
func keepState(o *stack.Options, data string) error {
	if data == "" {
		return nil
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return err
	}
	if !sameDir(os.Getenv("DYNAMODB_LOCAL_DB_PATH"), filepath.Join(abs, "dynamodb")) {
		return fmt.Errorf("-data %s needs DynamoDB Local on disk in %s: start it with make run DATA=%s (or %s=%s scripts/with-dynamodb-local.sh …)",
			data, filepath.Join(abs, "dynamodb"), data, envData, data)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	o.KeepState = true
	return nil
}

// sameDir reports whether both name the same existing directory, however
// each spells it (symbolic links, relative paths).
func sameDir(a, b string) bool {
	if a == "" {
		return false
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func printEndpoints(w io.Writer, s *stack.Stack) {
	fmt.Fprintf(w, `Myriarch local stack
  REST API          %s/api/v1
  Admin token       %s   (applies revisions)
  Operator token    %s   (approves rollouts: nobody approves a rollout they started)
  Viewer token      %s   (reads only)
  Web page          %s/ui/   (sign in with one of the tokens above)
  OpAMP gateway     %s   (agent token %s)
  Step Functions    %s   (state machine %s)
  DynamoDB Local    %s
`, s.APIURL, s.AdminToken, s.OperatorToken, s.ViewerToken, s.APIURL, s.GatewayURL, s.AgentToken,
		s.SFNURL, s.StateMachineArn, os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"))
}

// printGatewayProcess says what a standalone gateway needs: the exact
// command line that starts one (this one again after a kill, or another
// with other addresses).
func printGatewayProcess(w io.Writer, s *stack.Stack) {
	if s.Gateway == nil {
		return
	}
	fmt.Fprintf(w, `  Gateway process   pid %d, /healthz on http://%s/healthz; kill it and start it again with:
    %s
`, s.Gateway.PID(), s.Gateway.HealthAddr, s.Gateway.Command())
}

// besideExecutable is name in the directory of the running binary (make
// builds bin/myriarch-local and bin/opamp-gateway side by side), or name
// looked up in PATH when that directory is unknown.
func besideExecutable(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(exe), name)
}

// exportLine sets, for a shell, what the README's walk-through uses: the
// API and the admin token for myrctl, the other roles' tokens, the agent
// token, and the Step Functions endpoint with the rollout state machine.
func exportLine(s *stack.Stack) string {
	return fmt.Sprintf("export MYRIARCH_API=%s MYRIARCH_TOKEN=%s MYRIARCH_OPERATOR_TOKEN=%s MYRIARCH_VIEWER_TOKEN=%s MYRIARCH_AGENT_TOKEN=%s MYRIARCH_GATEWAY=%s MYRIARCH_SFN=%s MYRIARCH_STATE_MACHINE=%s",
		s.APIURL, s.AdminToken, s.OperatorToken, s.ViewerToken, s.AgentToken, s.GatewayURL, s.SFNURL, s.StateMachineArn)
}
