// Package stack is Myriarch on one machine: the same code as in the cloud,
// wired to local services. DynamoDB Local (started around the process by
// scripts/with-dynamodb-local.sh) holds the state; the local Step Functions
// endpoint runs statemachines/rollout.asl.json with the engine Lambda
// registered in-process; the API, the OpAMP gateway, the planner schedule
// and the delivery of the agents table's and the events table's streams
// run as goroutines (the gateway, with Options.GatewayBinary, as a process
// of its own). Rollout notifications go to the log and, with
// MYRIARCH_EVENTS_WEBHOOK, to a webhook; the API's feed lists them.
package stack

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/delivery"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/gate/gateread"
	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/local/sfnlocal"
)

// EngineFunction is the engine Lambda's name, locally and in the cloud.
const EngineFunction = "myriarch-engine"

// Options of a local stack. Addresses "127.0.0.1:0" pick free ports.
type Options struct {
	APIAddr, GatewayAddr, SFNAddr string
	TablePrefix                   string        // default "local-"
	PlannerEvery                  time.Duration // the planner schedule; default 15s
	StateMachineFile              string        // default statemachines/rollout.asl.json
	Releases                      []string      // collector releases the version options know
	AgentToken                    string        // default: minted
	Log                           *slog.Logger
	// Clock is the wall clock of the whole stack (required): the command
	// passes time.Now, so that nothing in core/ or adapters/ reads the clock itself.
	Clock func() time.Time
	// PrometheusURL and AlertmanagerURL are the gates' providers (default:
	// MYRIARCH_PROMETHEUS_URL and MYRIARCH_ALERTMANAGER_URL, else none).
	PrometheusURL, AlertmanagerURL string
	// SecretsDir holds the executors' secrets, a file per name (default:
	// MYRIARCH_SECRETS_DIR); MYRIARCH_SECRET_<NAME> variables work too.
	SecretsDir string
	// EventsWebhook receives every rollout notification as a POST (default:
	// MYRIARCH_EVENTS_WEBHOOK, else none).
	EventsWebhook string
	// Tokens are the bearer tokens of the three roles and of the agents;
	// those left empty are minted. A stack that keeps its state passes the
	// tokens of its last run, so that they keep working.
	Tokens Tokens
	// People are more API tokens besides those of the three roles: entries
	// of the API's token table (the cloud's MYRIARCH_TOKENS), so that, for
	// one, a wave that needs two approvers can be approved locally.
	People []api.TokenEntry
	// KeepState keeps the tables of an earlier run (DynamoDB Local started
	// on disk) instead of starting empty; the watchdog then resumes the
	// rollouts that were running, whose executions the new Step Functions
	// endpoint does not know.
	KeepState bool
	// GatewayBinary, if set, runs the OpAMP gateway as a process of its own
	// (the opamp-go gateway binary, bin/opamp-gateway), on GatewayAddr and
	// GatewayHealthAddr, so that it can be killed and started again on its
	// own (Stack.Gateway); empty runs it in-process.
	GatewayBinary string
	// GatewayHealthAddr is the process's /healthz (default: a free loopback
	// port; the API has 8080, the binary's default).
	GatewayHealthAddr string
	// GatewayStderr receives the process's log (default os.Stderr).
	GatewayStderr io.Writer
	// WSPing is the WebSocket ping interval of the gateway, in-process or
	// the binary's -ws-ping (default: the gateway's, a minute).
	WSPing time.Duration
	// WatchdogEvery is how often the watchdog looks for rollouts without a
	// running execution (default 1m); it also runs once at start.
	WatchdogEvery time.Duration
	// Packages is the gateway's package source (gateway.Config's
	// DownloadURL, PackageChecksumsURL, PackageSignatureURL), in-process
	// or the binary's flags (default: the gateway's, no checksums or
	// signatures).
	Packages PackageSource
}

// PackageSource is where the gateway's offers to myriarch-updaters point:
// URL templates with {version}, {os} and {arch} (docs/executors.md).
type PackageSource struct {
	DownloadURL, ChecksumsURL, SignatureURL string
}

// Tokens are the local stack's bearer tokens.
type Tokens struct {
	Admin    string `json:"admin"`
	Operator string `json:"operator"` // approves what the admin applied
	Viewer   string `json:"viewer"`   // reads only
	Agent    string `json:"agent"`    // the OpAMP gateway's agent token
}

// ListenError is an address a service of the stack could not listen on,
// so that the command can name the flag that moves it.
type ListenError struct {
	Service string // "api", "gateway" or "sfn"
	Addr    string
	Err     error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s cannot listen on %s: %v", serviceNames[e.Service], e.Addr, errors.Unwrap(e.Err))
}

func (e *ListenError) Unwrap() error { return e.Err }

var serviceNames = map[string]string{"api": "the REST API", "gateway": "the OpAMP gateway", "sfn": "the Step Functions endpoint"}

// CheckAddresses tries each address the stack would listen on, so that a
// command can refuse a busy one before it prints or starts anything (a
// ListenError). Start checks them again as it listens: another process may
// take one between the two.
func CheckAddresses(o Options) error {
	o = withDefaults(o)
	addrs := []struct{ service, addr string }{{"api", o.APIAddr}, {"gateway", o.GatewayAddr}, {"sfn", o.SFNAddr}}
	if o.GatewayBinary != "" && o.GatewayHealthAddr != "" {
		addrs = append(addrs, struct{ service, addr string }{"gateway", o.GatewayHealthAddr})
	}
	for _, a := range addrs {
		ln, err := listen(a.service, a.addr)
		if err != nil {
			return err
		}
		_ = ln.Close()
	}
	return nil
}

func listen(service, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ListenError{Service: service, Addr: addr, Err: err}
	}
	return ln, nil
}

// Endpoints are what a client of a running stack needs, the local stack's
// and the local cloud's alike (cmd/myriarch-cloud runs the demo on them):
// its URLs, its tokens, and the wall clock.
type Endpoints struct {
	APIURL, GatewayURL string
	AdminToken         string
	AgentToken         string
	OperatorToken      string // approves what the admin applied
	ViewerToken        string // reads only: the page shows it no actions
	Clock              func() time.Time
}

func (e Endpoints) clock() time.Time { return e.Clock() }

// Stack is a running local stack.
type Stack struct {
	Endpoints
	SFNURL          string
	StateMachineArn string
	Deps            setup.Deps
	// Gateway is the gateway process with Options.GatewayBinary, else nil.
	Gateway *GatewayProcess

	sfnSrv *sfnlocal.Server
	// The HTTP servers, by the part of the stack they belong to (Stop
	// stops the parts in order).
	sfnHTTP, apiHTTP *http.Server
	mu               sync.Mutex // guards gateways
	gateways         []*gatewayTask
	runCtx           context.Context
	cancel           context.CancelFunc
	wg               sync.WaitGroup
	log              *slog.Logger
	wsPing           time.Duration
	pkgs             PackageSource
	// agentBatch is when the agent stream's last batch was handled (Unix
	// nanoseconds of clock): a benchmark waits for the stream to go quiet.
	agentBatch atomic.Int64
	// StreamUsage counts the stream pollers' reads (the store counts its
	// own calls): what the stack reads of DynamoDB is the two together.
	StreamUsage usage.Meter
}

// Start brings the stack up. DynamoDB Local must be reachable through
// AWS_ENDPOINT_URL_DYNAMODB (and _STREAMS): run it under
// scripts/with-dynamodb-local.sh.
func Start(ctx context.Context, o Options) (*Stack, error) {
	o = withDefaults(o)
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		return nil, errors.New("AWS_ENDPOINT_URL_DYNAMODB is unset: start the local stack through scripts/with-dynamodb-local.sh (make run)")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if o.Clock == nil {
		cancel()
		return nil, errors.New("stack: Options.Clock is required")
	}
	s := &Stack{runCtx: runCtx, cancel: cancel, log: o.Log, wsPing: o.WSPing, pkgs: o.Packages, Endpoints: Endpoints{AgentToken: o.AgentToken, Clock: o.Clock}}
	if err := s.start(ctx, runCtx, o); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func withDefaults(o Options) Options {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.APIAddr, "127.0.0.1:8080")
	def(&o.GatewayAddr, "127.0.0.1:4320")
	def(&o.SFNAddr, "127.0.0.1:8083")
	def(&o.TablePrefix, "local-")
	def(&o.StateMachineFile, "statemachines/rollout.asl.json")
	if o.PlannerEvery == 0 {
		o.PlannerEvery = 15 * time.Second
	}
	if len(o.Releases) == 0 {
		o.Releases = []string{"0.160.0", "0.161.0", "0.162.0", "0.163.0"}
	}
	if o.AgentToken == "" {
		o.AgentToken = cmp.Or(o.Tokens.Agent, randomToken())
	}
	if o.WatchdogEvery == 0 {
		o.WatchdogEvery = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return o
}

func (s *Stack) start(ctx, runCtx context.Context, o Options) error {
	clock := func() time.Time { return o.Clock().UTC() }
	getenv := func(k string) string {
		switch k {
		case setup.EnvTablePrefix:
			return o.TablePrefix
		case gateread.EnvCloudWatch:
			return "off" // nothing local may reach AWS
		case gateread.EnvPrometheusURL:
			return cmp.Or(o.PrometheusURL, os.Getenv(k))
		case gateread.EnvAlertmanagerURL:
			return cmp.Or(o.AlertmanagerURL, os.Getenv(k))
		case secrets.EnvDir:
			return cmp.Or(o.SecretsDir, os.Getenv(k))
		case secrets.EnvPrefix:
			return "" // the secrets are local: never Secrets Manager
		}
		return os.Getenv(k)
	}
	d, err := setup.FromEnv(ctx, getenv, clock, o.Log)
	if err != nil {
		return err
	}
	if err := s.tables(ctx, d, o.TablePrefix, o.KeepState); err != nil {
		return err
	}
	if err := s.stepFunctions(ctx, &d, o); err != nil {
		return err
	}
	s.Deps = d
	if err := s.api(d, o); err != nil {
		return err
	}
	if err := s.gateway(runCtx, d, o); err != nil {
		return err
	}
	if err := s.stream(ctx, runCtx, d, o.TablePrefix); err != nil {
		return err
	}
	if err := s.notifications(ctx, runCtx, d, o); err != nil {
		return err
	}
	s.schedule(runCtx, d, o.PlannerEvery)
	s.watchdog(runCtx, d, o.WatchdogEvery)
	return nil
}

// tables creates the tables afresh, for a local stack that starts empty,
// or only those missing, for one that keeps its state.
func (s *Stack) tables(ctx context.Context, d setup.Deps, prefix string, keep bool) error {
	client := localDynamo(d)
	if keep {
		if err := store.CreateTables(ctx, client, prefix); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		return store.EnableTimeToLive(ctx, client, prefix)
	}
	if err := store.DeleteTables(ctx, client, prefix); err != nil {
		return fmt.Errorf("delete old tables: %w", err)
	}
	if err := store.CreateTables(ctx, client, prefix); err != nil {
		return fmt.Errorf("create tables: %w", err)
	}
	return store.EnableTimeToLive(ctx, client, prefix)
}

// stepFunctions serves the local endpoint with the engine registered and
// creates the rollout state machine from its ASL file, substituting the
// engine's ARN as the CDK app's DefinitionSubstitutions do.
func (s *Stack) stepFunctions(ctx context.Context, d *setup.Deps, o Options) error {
	s.sfnSrv = sfnlocal.New(sfnlocal.Options{Logger: o.Log})
	var url string
	var err error
	s.sfnHTTP, url, err = s.serve("sfn", o.SFNAddr, s.sfnSrv)
	if err != nil {
		return err
	}
	s.SFNURL = url
	d.SFN = sfn.NewFromConfig(d.AWS, func(opt *sfn.Options) { opt.BaseEndpoint = aws.String(url) })
	def, err := os.ReadFile(o.StateMachineFile)
	if err != nil {
		return fmt.Errorf("read the state machine: %w", err)
	}
	arn := fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", s.sfnSrv.Region(), s.sfnSrv.AccountID(), EngineFunction)
	out, err := d.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name:       aws.String("myriarch-rollout"),
		Definition: aws.String(strings.ReplaceAll(string(def), "${EngineFunctionArn}", arn)),
		RoleArn:    aws.String(fmt.Sprintf("arn:aws:iam::%s:role/myriarch-rollout", s.sfnSrv.AccountID())),
	})
	if err != nil {
		return fmt.Errorf("create the rollout state machine: %w", err)
	}
	s.StateMachineArn = aws.ToString(out.StateMachineArn)
	d.StateMachineArn = s.StateMachineArn
	engine := d.Engine()
	s.sfnSrv.RegisterLambda(EngineFunction, func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
		var in enginetask.Input
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, err
		}
		res, err := engine.Handle(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	})
	return nil
}

// api serves the REST API with an admin token minted for this run.
func (s *Stack) api(d setup.Deps, o Options) error {
	// Two people: the admin applies revisions, and since nobody approves a
	// rollout they started, the operator approves them; and a viewer, who
	// only reads.
	token, entry, err := localToken(o.Tokens.Admin, api.Principal{Actor: "user:00000000-0000-4000-8000-000000000001", DisplayName: "local admin", Role: api.RoleAdmin})
	if err != nil {
		return err
	}
	opToken, opEntry, err := localToken(o.Tokens.Operator, api.Principal{Actor: "user:00000000-0000-4000-8000-000000000002", DisplayName: "local operator", Role: api.RoleOperator})
	if err != nil {
		return err
	}
	viewToken, viewEntry, err := localToken(o.Tokens.Viewer, api.Principal{Actor: "user:00000000-0000-4000-8000-000000000003", DisplayName: "local viewer", Role: api.RoleViewer})
	if err != nil {
		return err
	}
	tokens, err := api.NewTokenTable(append([]api.TokenEntry{entry, opEntry, viewEntry}, o.People...))
	if err != nil {
		return fmt.Errorf("the people's tokens with the stack's own: %w", err)
	}
	s.AdminToken, s.OperatorToken, s.ViewerToken = token, opToken, viewToken
	h, err := api.New(api.Deps{
		Store: d.Store, Actions: d.Evaluator(), SFN: d.SFN, Planning: d.Planning(s.newRolloutID),
		Catalog: api.StaticCatalog{Versions: o.Releases}, Auth: tokens, Clock: d.Clock, NewID: randomToken, Log: o.Log,
		Liveness:       d.Liveness, // the inventory judges agents as the rollouts do
		ServerTimezone: d.ServerTimezone,
	})
	if err != nil {
		return err
	}
	s.apiHTTP, s.APIURL, err = s.serve("api", o.APIAddr, h)
	return err
}

// gateway serves OpAMP at /v1/opamp and pushes from the lagging index.
func (s *Stack) gateway(runCtx context.Context, d setup.Deps, o Options) error {
	if o.GatewayBinary != "" {
		return s.gatewayProcess(runCtx, o)
	}
	url, err := s.startGateway(runCtx, d, o.GatewayAddr, o.Log)
	s.GatewayURL = url
	return err
}

// gatewayProcess starts the gateway binary on fixed addresses, with what it
// needs in its environment: the agent token (never a flag), DynamoDB Local,
// and no instance metadata.
func (s *Stack) gatewayProcess(ctx context.Context, o Options) error {
	addr, err := reserveAddr(o.GatewayAddr)
	if err != nil {
		return &ListenError{Service: "gateway", Addr: o.GatewayAddr, Err: err}
	}
	health, err := reserveAddr(cmp.Or(o.GatewayHealthAddr, "127.0.0.1:0"))
	if err != nil {
		return &ListenError{Service: "gateway", Addr: o.GatewayHealthAddr, Err: err}
	}
	p := &GatewayProcess{
		Binary: o.GatewayBinary, Addr: addr, HealthAddr: health, Stderr: cmp.Or[io.Writer](o.GatewayStderr, os.Stderr),
		Env: []string{"MYRIARCH_AGENT_TOKENS=" + s.AgentToken, store.EnvDynamoDBEndpoint + "=" + os.Getenv(store.EnvDynamoDBEndpoint),
			"AWS_EC2_METADATA_DISABLED=true"},
		Args: []string{"-listen", addr, "-health-listen", health, "-table-prefix", o.TablePrefix, "-poll-interval", "500ms",
			"-drain-timeout", "3s", "-log-level", "warn", "-ws-ping", cmp.Or(o.WSPing, gateway.DefaultWSPing).String()},
	}
	for flag, v := range map[string]string{"-download-url": o.Packages.DownloadURL,
		"-package-checksums-url": o.Packages.ChecksumsURL, "-package-signature-url": o.Packages.SignatureURL} {
		if v != "" {
			p.Args = append(p.Args, flag, v)
		}
	}
	s.Gateway, s.GatewayURL = p, "ws://"+addr+"/v1/opamp"
	return p.Start(ctx)
}

// AddGateway starts another gateway task over the same store, as a second
// Fargate task behind the load balancer would be; it stops with the stack.
// It returns the task's OpAMP URL.
func (s *Stack) AddGateway(addr string) (string, error) {
	return s.startGateway(s.runCtx, s.Deps, addr, s.log)
}

// gatewayTask is an in-process gateway: its server and its push loop,
// which run until it is stopped.
type gatewayTask struct {
	srv    *http.Server
	g      *gateway.Gateway
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *Stack) startGateway(runCtx context.Context, d setup.Deps, addr string, log *slog.Logger) (string, error) {
	g, err := gateway.New(gateway.Config{Now: d.Clock, Logger: log, Tokens: []string{s.AgentToken}, PollInterval: 500 * time.Millisecond,
		WSPing: s.wsPing, DownloadURL: s.pkgs.DownloadURL, PackageChecksumsURL: s.pkgs.ChecksumsURL,
		PackageSignatureURL: s.pkgs.SignatureURL}, d.Store, d.Store)
	if err != nil {
		return "", err
	}
	h, connCtx, err := g.Attach()
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/opamp", h)
	ln, err := listen("gateway", addr)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(runCtx)
	task := &gatewayTask{srv: &http.Server{Handler: mux, ConnContext: connCtx, ReadHeaderTimeout: 10 * time.Second}, g: g, cancel: cancel}
	s.mu.Lock()
	s.gateways = append(s.gateways, task)
	s.mu.Unlock()
	task.wg.Add(2)
	go func() { defer task.wg.Done(); _ = task.srv.Serve(ln) }()
	go func() { defer task.wg.Done(); g.Run(ctx) }()
	return "ws://" + ln.Addr().String() + "/v1/opamp", nil
}

// stop drains the gateway as a task that is replaced does (its agents'
// disconnects are stored, its lease ends) within wait, then ends it.
func (t *gatewayTask) stop(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := t.g.Drain(ctx)
	_ = t.srv.Close() // the WebSockets are hijacked: Drain closed them
	t.cancel()
	t.wg.Wait()
	return err
}

// agentStreamLanes is how many batches of the agents' stream are handled
// side by side, as the cloud mapping's ParallelizationFactor
// (infra/events.go): with 4, report → transition of a wave of 1,000 fell
// from 1.9 to 1.1-1.4 s at p50; 8 lanes gave 1.7 s, each pass querying the wave
// (docs/scale.md).
const agentStreamLanes = 4

// stream delivers the agents table's stream to the agent-event handler, as
// the Lambda event source mapping does in the cloud.
func (s *Stack) stream(ctx, runCtx context.Context, d setup.Deps, prefix string) error {
	h := d.AgentEvents(d.Planning(s.newRolloutID)).Records(store.DecodeAgentImage)
	return s.poll(ctx, runCtx, d, store.TablesWithPrefix(prefix).Agents, "agent stream", agentStreamLanes, func(ctx context.Context, recs []streams.Record) error {
		defer func() { s.agentBatch.Store(s.clock().UnixNano()) }()
		return h(ctx, recs)
	})
}

// agentEventsQuiet waits until the agent stream handled no batch for quiet
// (or ctx ends): what the agents reported has been evaluated.
func (s *Stack) agentEventsQuiet(ctx context.Context, quiet time.Duration) error {
	for {
		if last := time.Unix(0, s.agentBatch.Load()); s.clock().Sub(last) >= quiet {
			return nil
		}
		if err := sleep(ctx, quiet/10); err != nil {
			return err
		}
	}
}

// notifications delivers the events table's stream, as the notify
// function does in the cloud, to the log and the webhook instead of an
// EventBridge bus.
func (s *Stack) notifications(ctx, runCtx context.Context, d setup.Deps, o Options) error {
	pubs := delivery.Publishers{delivery.Log{Log: s.log}}
	if url := cmp.Or(o.EventsWebhook, os.Getenv(delivery.EnvWebhook)); url != "" {
		pubs = append(pubs, delivery.Webhook{URL: url, Log: s.log})
	}
	dl := delivery.Delivery{Decode: store.DecodeEventImage, Publisher: pubs, Log: s.log}
	return s.poll(ctx, runCtx, d, store.TablesWithPrefix(o.TablePrefix).Events, "event stream", 1, dl.Poll)
}

// poll runs a poller of a table's stream until the stack stops; it returns
// once the poller is positioned.
func (s *Stack) poll(ctx, runCtx context.Context, d setup.Deps, table, name string, lanes int, h streams.Handler) error {
	desc, err := localDynamo(d).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	ready := make(chan struct{})
	p := streams.Poller{Streams: dynamodbstreams.NewFromConfig(d.AWS), StreamArn: aws.ToString(desc.Table.LatestStreamArn),
		Name: name, Handler: h, Log: s.log, Ready: ready, Lanes: lanes, Usage: &s.StreamUsage}
	s.goRun(func() { _ = p.Run(runCtx) })
	select {
	case <-ready:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the %s did not answer (is AWS_ENDPOINT_URL_DYNAMODB_STREAMS set?)", name)
	}
}

// schedule runs the planner over every fleet at a fixed interval, like the
// EventBridge rule in the cloud.
func (s *Stack) schedule(runCtx context.Context, d setup.Deps, every time.Duration) {
	planning := d.Planning(s.newRolloutID)
	s.repeat(runCtx, every, false, func() {
		if _, err := d.Tick(runCtx, planning); err != nil && runCtx.Err() == nil {
			s.log.Warn("scheduled planner run", "error", err.Error())
		}
	})
}

// watchdog resumes the rollouts whose executions are missing or ended, at
// once (after a restart, the endpoint knows none of them) and then at a
// fixed interval, as the scheduled watchdog function does in the cloud.
func (s *Stack) watchdog(runCtx context.Context, d setup.Deps, every time.Duration) {
	w := d.Watchdog()
	// The watchdog logs each rollout it resumes or cannot check.
	s.repeat(runCtx, every, true, func() { _, _ = w.Run(runCtx) })
}

// repeat runs f every interval (and once at start with now) until the
// stack stops.
func (s *Stack) repeat(runCtx context.Context, every time.Duration, now bool, f func()) {
	s.goRun(func() {
		if now {
			f()
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				f()
			}
		}
	})
}

func (s *Stack) serve(service, addr string, h http.Handler) (*http.Server, string, error) {
	ln, err := listen(service, addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if service == "api" {
		// Above the API's own limit, so that the API refuses a large header
		// with its problem instead of net/http's text/plain 431.
		srv.MaxHeaderBytes = api.ServerMaxHeaderBytes
	}
	s.goRun(func() { _ = srv.Serve(ln) })
	return srv, "http://" + ln.Addr().String(), nil
}

func (s *Stack) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// The parts of a stack, as Stop names them in its reports.
const (
	PartGateway   = "OpAMP gateway"
	PartAPI       = "REST API"
	PartFunctions = "Step Functions" // with the engine Lambda, the planner schedule, the watchdog, the stream delivery
)

// Stop shuts everything down and waits for it (StopReporting).
func (s *Stack) Stop() { s.StopReporting(nil) }

// How long each part may take to stop: the whole stack, DynamoDB Local
// and the gate servers included, stops within 2 s of a Ctrl-C. A drain
// takes longer only when agents of the user's are still connected; a
// request that has not ended within apiStopWait is cut.
const (
	gatewayStopWait = time.Second
	apiStopWait     = 500 * time.Millisecond
)

// StopReporting stops the stack in order and waits for it, calling report
// (unless nil) once each part has stopped, with what went wrong: first
// the OpAMP gateways, drained, so that their agents' disconnects are
// stored; then the REST API; last the functions: the planner schedule, the
// watchdog, the stream delivery and the Step Functions endpoint with the
// engine. The store outlives it (DynamoDB Local is stopped after the
// command), so that nothing writes to a store that is gone and retries.
// A part that never started is not reported.
func (s *Stack) StopReporting(report func(part string, err error)) {
	done := func(part string, err error) {
		if report != nil {
			report(part, err)
		}
	}
	if ok, err := s.stopGateways(); ok {
		done(PartGateway, err)
	}
	if s.apiHTTP != nil {
		done(PartAPI, shutdown(s.apiHTTP, apiStopWait))
	}
	s.cancel()
	if s.sfnHTTP != nil {
		err := shutdown(s.sfnHTTP, apiStopWait)
		s.sfnSrv.Close()
		s.wg.Wait()
		done(PartFunctions, err)
	}
	s.wg.Wait()
}

// stopGateways stops the gateway process and the in-process gateways (a
// test adds some beside the process: AddGateway); ok is false when none
// was started.
func (s *Stack) stopGateways() (ok bool, err error) {
	if s.Gateway != nil {
		err = s.Gateway.Stop(gatewayStopWait)
	}
	s.mu.Lock()
	tasks := s.gateways
	s.gateways = nil
	s.mu.Unlock()
	for _, t := range tasks {
		err = errors.Join(err, t.stop(gatewayStopWait))
	}
	return s.Gateway != nil || len(tasks) > 0, err
}

// shutdown ends a server's requests within wait, and then cuts those left.
func shutdown(srv *http.Server, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		return fmt.Errorf("requests still running after %s were cut", wait)
	}
	return nil // a listener closed already is no matter
}

// localToken is the given token of a principal, or a minted one.
func localToken(given string, p api.Principal) (string, api.TokenEntry, error) {
	if given == "" {
		return api.MintToken(p)
	}
	return given, api.TokenEntry{TokenSHA256: api.HashToken(given), Actor: p.Actor, DisplayName: p.DisplayName, Role: p.Role}, nil
}

// Tokens are the stack's tokens, to be kept for its next run.
func (s *Stack) Tokens() Tokens {
	return Tokens{Admin: s.AdminToken, Operator: s.OperatorToken, Viewer: s.ViewerToken, Agent: s.AgentToken}
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newRolloutID is time-ordered, then random: listings sort well, ids never collide.
func (s *Stack) newRolloutID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("r-%s-%s", s.clock().UTC().Format("20060102t150405"), hex.EncodeToString(b[:]))
}

// localDynamo is a DynamoDB client for DynamoDB Local, which sends no
// checksum on error responses (aws-sdk-go-v2 #3545: a warning each).
func localDynamo(d setup.Deps) *dynamodb.Client {
	return dynamodb.NewFromConfig(d.AWS, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
}
