// Package cloud runs a synthesized template as AWS would, on one machine:
// the tables in DynamoDB Local, every Lambda function from its asset's
// bootstrap under the Runtime Interface Emulator, the API Gateway front,
// the streams' event source mappings, the schedules, the state machine in
// the local Step Functions endpoint, and the gateway from its task
// definition, every AWS call of them held to its role's policies by the
// IAM proxy. Nothing the template sets is set here; what it lacks is an
// error. What is not emulated (the network, the load balancer, logs,
// alarms) is listed in docs/deploy.md.
package cloud

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
	"github.com/myriarch/myriarch/local/localcloud/iam"
	"github.com/myriarch/myriarch/local/sfnlocal"
)

// Options say where the template is and what runs it.
type Options struct {
	Assembly string // the cloud assembly directory (cdk synth --output)
	Stack    string // the stack's name, e.g. Myriarch-cloud
	// DynamoDB is DynamoDB Local's endpoint (scripts/with-dynamodb-local.sh
	// sets AWS_ENDPOINT_URL_DYNAMODB), run with -sharedDb: every role has
	// credentials of its own.
	DynamoDB string
	RIE      string // aws-lambda-rie (scripts/with-lambda-rie.sh)
	Gateway  string // the gateway binary (go build ./opamp-gateway)
	LogDir   string // functions' and the gateway's logs, the IAM record, the bus's events
	// Secrets are the operator's secrets beside the stack (the executors'
	// myriarch/<stage>/<name>), by name.
	Secrets map[string]string
	// ScheduleEvery runs a schedule more often than its rate, by the rule's
	// logical id: a local acceleration for tests, nothing the template says.
	ScheduleEvery map[string]time.Duration
	Parameters    map[string]string // the stack's parameters
	// Fresh deletes the template's tables first, as deleting the stack
	// would: a run starts empty.
	Fresh bool
	Log   *slog.Logger
	Clock func() time.Time
}

// Cloud is a running local cloud.
type Cloud struct {
	APIURL     string // the REST API's invoke URL, with its stage
	GatewayURL string // ws://…/v1/opamp
	AgentToken string // the agents' token, from the gateway's secret
	gatewayEnv map[string]string
	Template   *cfn.Template
	Bus        *bus
	// Record is every AWS call the cloud evaluated, by role; Policies are
	// the roles' policies it evaluated them against.
	Record   *iam.Recorder
	Policies *iam.Policies
	// failed counts the stream batches that went to an on-failure
	// destination (in AWS: the dead-letter queue and its alarm).
	failed atomic.Int64

	o       Options
	mu      sync.Mutex
	closers []func() error
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

// account and region of the local cloud's ARNs.
const (
	Region  = "us-east-1"
	Account = "123456789012"
)

// Start brings the template up.
func Start(ctx context.Context, o Options) (*Cloud, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.Clock == nil {
		return nil, errors.New("cloud: Options.Clock is required")
	}
	for name, v := range map[string]string{"DynamoDB": o.DynamoDB, "RIE": o.RIE, "Gateway": o.Gateway, "LogDir": o.LogDir} {
		if v == "" {
			return nil, fmt.Errorf("cloud: Options.%s is required", name)
		}
	}
	if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Cloud{o: o, cancel: cancel}
	if err := c.start(ctx, runCtx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cloud) start(ctx, runCtx context.Context) error {
	o := c.o
	raw, err := os.ReadFile(filepath.Join(o.Assembly, o.Stack+".template.json"))
	if err != nil {
		return fmt.Errorf("cloud: %w (synthesize the stack first: make cloud)", err)
	}
	// CloudFormation's own calls (the tables, the state machine) are not a
	// role's: they go to the services directly.
	admin := aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("cloudformation", "local", "")}
	ddb := dynamodb.NewFromConfig(admin, func(op *dynamodb.Options) { op.BaseEndpoint = aws.String(o.DynamoDB) })
	tables, err := rawTables(raw)
	if err != nil {
		return err
	}
	if o.Fresh {
		if err := deleteTables(ctx, ddb, tables); err != nil {
			return err
		}
	}
	streams, err := createTables(ctx, ddb, tables)
	if err != nil {
		return err
	}
	attrs := map[string]string{}
	for id, arn := range streams {
		attrs[id+".StreamArn"] = templateStreamArn(arn, Region, Account)
	}
	t, err := cfn.Parse(raw, o.Assembly, o.Stack, cfn.Options{Region: Region, Account: Account, Parameters: o.Parameters, Attributes: attrs})
	if err != nil {
		return err
	}
	c.Template = t
	return c.run(ctx, runCtx, t, streams)
}

// serve listens on a free loopback port.
func (c *Cloud) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	c.onClose(func() error { return srv.Close() })
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.o.Log.Error("cloud: serve", "error", err.Error())
		}
	}()
	return "http://" + ln.Addr().String(), nil
}

func (c *Cloud) onClose(f func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closers = append(c.closers, f)
}

// GatewayEnv is a variable of the gateway's environment, as its task
// definition sets it.
func (c *Cloud) GatewayEnv(name string) string { return c.gatewayEnv[name] }

// Denials are the calls a role's policy refused.
func (c *Cloud) Denials() []iam.Call { return c.Record.Denials() }

// FailedBatches counts the stream batches Lambda would have sent to a
// dead-letter queue.
func (c *Cloud) FailedBatches() int64 { return c.failed.Load() }

// Close stops everything, the last started first.
func (c *Cloud) Close() error {
	c.cancel()
	c.mu.Lock()
	closers := c.closers
	c.closers = nil
	c.mu.Unlock()
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	c.wg.Wait()
	return errors.Join(errs...)
}

// dynamoProxy forwards to DynamoDB Local as it came (DynamoDB Local does
// not check signatures).
func dynamoProxy(endpoint string) (http.Handler, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	return httputil.NewSingleHostReverseProxy(u), nil
}

// sfnEndpoint is the local Step Functions endpoint, served on a port of
// its own for CloudFormation's admin client (the IAM proxy hands the roles'
// calls to the server directly), and that client.
func sfnEndpoint(c *Cloud, log *slog.Logger) (*sfnlocal.Server, *sfn.Client, error) {
	srv := sfnlocal.New(sfnlocal.Options{Region: Region, AccountID: Account, Logger: log}) // the real clock: Wait states wait as in AWS
	c.onClose(func() error { srv.Close(); return nil })
	u, err := c.serve(srv)
	if err != nil {
		return nil, nil, err
	}
	admin := aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("cloudformation", "local", "")}
	return srv, sfn.NewFromConfig(admin, func(op *sfn.Options) { op.BaseEndpoint = aws.String(u) }), nil
}

// startGateway runs the task definition's container.
func (c *Cloud) startGateway(ctx context.Context, t *cfn.Template, base map[string]string, sec *secrets, allowed roleCheck) error {
	ids := t.OfType("AWS::ECS::TaskDefinition")
	if len(ids) == 0 {
		return nil // a stack without the gateway (gateway=false) runs it elsewhere
	}
	ct, err := containerOf(t, ids[0], sec)
	if err != nil {
		return err
	}
	for _, arn := range ct.Secrets {
		// ECS's agent reads the secrets with the task's execution role; a
		// refusal stops the task before it starts (ResourceInitializationError).
		ok, err := allowed(ctx, ct.ExecutionRole, "secretsmanager:GetSecretValue", arn)
		if err != nil {
			return fmt.Errorf("gateway task: its secret %s: %w", arn, err)
		}
		if !ok {
			return fmt.Errorf("gateway task: ResourceInitializationError: the execution role %s may not read the secret %s", ct.ExecutionRole, arn)
		}
	}
	cmd, log, err := ct.command(c.o.Gateway, base, c.o.LogDir)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	c.onClose(func() error { return stopProcess(cmd, log) })
	c.GatewayURL = "ws://" + ct.Env["MYRIARCH_GATEWAY_LISTEN"] + "/v1/opamp"
	c.AgentToken, c.gatewayEnv = ct.Env["MYRIARCH_AGENT_TOKENS"], ct.Env
	return waitHTTP("http://"+ct.Env["MYRIARCH_GATEWAY_HEALTH_LISTEN"]+"/healthz", 30*time.Second)
}

func stopProcess(cmd *exec.Cmd, log *os.File) error {
	defer log.Close()
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	return nil
}

// waitHTTP waits for u to answer 200, at most within (a bound on a
// process's start, with a timer: no clock read).
func waitHTTP(u string, within time.Duration) error {
	deadline := time.After(within)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-deadline:
			return fmt.Errorf("%s did not answer 200 within %s (last: %v)", u, within, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
