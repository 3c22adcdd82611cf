package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cloud"
	"github.com/myriarch/myriarch/local/stack"
)

// serveCmd starts the cloud from the assembly; demo runs `make demo`'s
// scenario on it and stops, run serves until interrupted.
func serveCmd(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	dir := fs.String("dir", "build/cloud", "the settings of prepare; logs go to <dir>/logs")
	assembly := fs.String("assembly", ".cdk.out-cloud", "the cloud assembly (cdk synth --output)")
	gateway := fs.String("gateway", "build/cloud/opamp-gateway", "the gateway binary (go build ./opamp-gateway)")
	agents := fs.Int("agents", 20, "demo: simulated collectors")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var s cloud.Settings
	b, err := os.ReadFile(filepath.Join(*dir, "settings.json"))
	if err != nil {
		return fmt.Errorf("%w (run prepare and the synthesis first: make cloud)", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	logs := filepath.Join(*dir, "logs")
	gates, err := cloud.StartGates(s, filepath.Join(*dir, "gates"))
	if err != nil {
		return err
	}
	defer gates()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cloud.Start(ctx, cloud.Options{
		Assembly: *assembly, Stack: "Myriarch-" + s.Stage, DynamoDB: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"),
		RIE: os.Getenv("MYRIARCH_LAMBDA_RIE"), Gateway: *gateway, LogDir: logs,
		Parameters: map[string]string{"GatewayCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/local"},
		Log:        log, Clock: time.Now, Fresh: true,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(stdout, "Myriarch's template runs locally, every AWS call held to its role's policy:\n  REST API  %s\n  page      %s/ui\n  OpAMP     %s\n  logs      %s\n", c.APIURL, c.APIURL, c.GatewayURL, logs)
	fmt.Fprintf(stdout, "  export MYRIARCH_URL=%s MYRIARCH_TOKEN=%s\n", c.APIURL, s.AdminToken)
	if mode == "run" {
		<-ctx.Done()
		return c.Close()
	}
	e := stack.Endpoints{APIURL: c.APIURL, GatewayURL: c.GatewayURL, AdminToken: s.AdminToken, OperatorToken: s.OperatorToken,
		ViewerToken: s.ViewerToken, AgentToken: c.AgentToken, Clock: time.Now}
	sum, err := e.Demo(ctx, stack.DemoOptions{Revision: "examples/quickstart", Agents: *agents, Speed: 4, HealthWait: "5s", Bake: "2s",
		NewVersion: "0.162.0", MetricsAddr: s.Metrics, Timeout: 10 * time.Minute, Out: stdout})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d rollouts completed, %d targets succeeded, %d rolled back, in %s\n", sum.RolloutsCompleted, sum.TargetsSucceeded, sum.RolloutsRolledBack, sum.Wall.Round(time.Second))
	if d := c.Denials(); len(d) > 0 {
		return fmt.Errorf("%d calls were denied by their role's policy (%s): %v", len(d), filepath.Join(logs, "iam-calls.jsonl"), d)
	}
	return nil
}
