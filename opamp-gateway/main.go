// Command opamp-gateway is the always-on OpAMP server of Myriarch (a
// Fargate service behind a load balancer in the cloud, one process in the
// local stack). Agents connect over WebSocket or plain HTTP at /v1/opamp
// with a bearer token; the gateway records what they report in DynamoDB and
// pushes the configurations and package offers the rollouts decide. See
// adapters/gateway.
//
// Flags, each with an environment variable that sets its default:
//
//	-listen            MYRIARCH_GATEWAY_LISTEN         OpAMP address [127.0.0.1:4320]
//	-health-listen     MYRIARCH_GATEWAY_HEALTH_LISTEN  /healthz for the load balancer [127.0.0.1:8080]
//	-table-prefix      MYRIARCH_TABLE_PREFIX           DynamoDB table prefix (required)
//	-tokens-file       MYRIARCH_AGENT_TOKENS_FILE      agent tokens, one a line; re-read on SIGHUP
//	-tls-cert, -tls-key  MYRIARCH_GATEWAY_TLS_CERT, _KEY  serve TLS (in the cloud the load balancer does)
//	-poll-interval     MYRIARCH_GATEWAY_POLL_INTERVAL  lagging index poll [1s]
//	-heartbeat         MYRIARCH_GATEWAY_HEARTBEAT      agent heartbeat, unit of liveness [30s]
//	-offline-after     MYRIARCH_GATEWAY_OFFLINE_AFTER  a count of heartbeats (not a duration): how many of silence make an agent offline [3]
//	-download-url      MYRIARCH_GATEWAY_DOWNLOAD_URL   package URL template with {version}, and {os} {arch} of an updater [https://example.invalid/otelcol/{version}]
//	-package-name      MYRIARCH_GATEWAY_PACKAGE_NAME   OpAMP package of the collector [""]
//	-package-checksums-url  MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL  a release's checksums file, {version} [none]
//	-package-signature-url  MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL  an archive's minisign signature, {version} {os} {arch} [none]
//	-drain-timeout     MYRIARCH_GATEWAY_DRAIN_TIMEOUT  how long SIGTERM waits for connections to close [20s]
//	-ws-ping           MYRIARCH_GATEWAY_WS_PING        quiet before a WebSocket ping, under the NLB's 350 s idle timeout [1m]; 0 = off
//	-first-message-wait  MYRIARCH_GATEWAY_FIRST_MESSAGE_WAIT  close a WebSocket that sends no message this long after connecting [10s]
//	-max-conns-per-source  MYRIARCH_GATEWAY_MAX_CONNS_PER_SOURCE  WebSocket connections of one source address [1000]; 0 = no limit
//	-decode-slots      MYRIARCH_GATEWAY_DECODE_SLOTS   messages over 16 KiB read, decoded and handled at once [4]
//	-agent-endpoint    MYRIARCH_GATEWAY_AGENT_ENDPOINT  OpAMP URL offered with an agent's credential [the request's]
//	-agent-ca-file     MYRIARCH_GATEWAY_AGENT_CA_FILE   PEM of the CA offered with the credential [none]
//	-require-agent-credential  MYRIARCH_GATEWAY_REQUIRE_AGENT_CREDENTIAL  refuse agents that cannot take one [false]
//	-credential-rotate-after   MYRIARCH_GATEWAY_CREDENTIAL_ROTATE_AFTER   offer a new credential after this age [0: never]
//	-log-level         MYRIARCH_LOG_LEVEL              debug, info, warn or error [info]
//	-debug-listen      MYRIARCH_GATEWAY_DEBUG_LISTEN   net/http/pprof under /debug/pprof/ [off]; loopback addresses only
//
// Agent tokens also come from MYRIARCH_AGENT_TOKENS (comma-separated); the
// union of both sources is accepted, so a secret rotates by adding the new
// one, rolling agents over, then removing the old one. Tokens are never
// flags: a command line is visible to every user of the host.
// AWS_ENDPOINT_URL_DYNAMODB points the store at DynamoDB Local; on a
// loopback host it also keeps the SDK off the instance metadata endpoint,
// with a region and dummy credentials unless the environment sets them
// (store.AWSConfig).
//
// A WebSocket connection that carried no message and no ping for -ws-ping
// is sent a ping frame, so that the Network Load Balancer, which drops a
// flow idle for 350 s, keeps the connection of an agent that says nothing
// for longer; pings are not sent
// over the gateway's own TLS (-tls-cert; adapters/gateway, ping.go says why).
//
// The debug listener is off unless -debug-listen names a loopback address
// (127.0.0.1:6060, [::1]:6060, localhost:6060; any other is refused at
// start): it has no authentication and profiles show what the process
// holds. Reach it from the host or through a tunnel, for example
// go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=60.
//
// GET /healthz answers 503 with a short reason while draining, and while
// the store cannot be read with the gateway's credentials (one read of the
// agents table with a 2 s timeout, its answer cached for 5 s), so that the
// load balancer takes the task out of service.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/adapters/store"
)

func main() {
	o, err := parseOptions(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "opamp-gateway:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: o.logLevel}))
	if err := run(o, log); err != nil {
		log.Error("opamp-gateway stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(o options, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cfg, err := store.AWSConfig(ctx, os.Getenv)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	st := store.New(dynamodb.NewFromConfig(cfg, withIdleConns), store.TablesWithPrefix(o.tablePrefix))
	check := storeCheck(cfg.Credentials, st)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reload := make(chan struct{}, 1)
	go func() {
		for range hup {
			reload <- struct{}{}
		}
	}()
	return serve(ctx, o, st, check, log, reload, nil)
}

// withIdleConns keeps as many idle connections to DynamoDB as the gateway
// has store calls in flight (its messages, the poll and its pushes): the
// SDK's default of 10 per host closes and opens connections all the time
// when more calls run at once.
func withIdleConns(o *dynamodb.Options) {
	o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 2 * gateway.DefaultStoreConcurrency
	})
}

// stores is what the gateway needs of adapters/store.
type stores interface {
	gateway.Agents
	gateway.Configs
}

// The store offers what the gateway uses when a store has it: push
// acknowledgements and batch reads of a lagging page.
var (
	_ gateway.PushAcker   = (*store.Store)(nil)
	_ gateway.BatchReader = (*store.Store)(nil)
)

// serve runs the gateway until ctx ends, then drains: the health endpoint
// (which answers 503 too while check fails) answers 503, the OpAMP listener closes, open connections are closed (the
// agents reconnect to another task) and serve waits for them up to the
// drain timeout. ready, if set, learns the bound addresses.
func serve(ctx context.Context, o options, st stores, check func(context.Context) error, log *slog.Logger, reload <-chan struct{}, ready func(opamp, health net.Addr)) error {
	tokens, err := o.loadTokens()
	if err != nil {
		return err
	}
	identity, err := o.identity()
	if err != nil {
		return err
	}
	now := func() time.Time { return time.Now().UTC() }
	g, err := gateway.New(gateway.Config{
		Now: now, Logger: log, Tokens: tokens,
		Heartbeat: o.heartbeat, OfflineAfterHeartbeats: o.offlineHeartbeats, PollInterval: o.pollInterval,
		PackageName: o.packageName, DownloadURL: o.downloadURL, WSPing: wsPing(o.wsPing),
		PackageChecksumsURL: o.checksumsURL, PackageSignatureURL: o.signatureURL,
		FirstMessageWait: o.firstMessageWait, MaxConnsPerSource: o.maxConnsPerSource, DecodeSlots: o.decodeSlots,
		Identity: identity,
	}, st, st)
	if err != nil {
		return err
	}
	handler, connContext, err := g.Attach()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/opamp", handler)
	opamp := &http.Server{Handler: mux, ConnContext: connContext, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	health := &http.Server{Handler: healthHandler(g, newReadiness(check, now, log)), ReadHeaderTimeout: 5 * time.Second}

	opampLn, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen for OpAMP: %w", err)
	}
	healthLn, err := net.Listen("tcp", o.healthListen)
	if err != nil {
		opampLn.Close()
		return fmt.Errorf("listen for health checks: %w", err)
	}
	if ready != nil {
		ready(opampLn.Addr(), healthLn.Addr())
	}
	failed := make(chan error, 2)
	go func() {
		if o.tlsCert != "" {
			failed <- opamp.ServeTLS(opampLn, o.tlsCert, o.tlsKey)
		} else {
			failed <- opamp.Serve(opampLn)
		}
	}()
	go func() { failed <- health.Serve(healthLn) }()
	publishStats(g)
	if debug := serveDebug(o.debugListen, log); debug != nil {
		defer debug.Close()
	}
	pollCtx, stopPolling := context.WithCancel(context.Background())
	defer stopPolling()
	go g.Run(pollCtx)
	log.Info("opamp-gateway serving", "opamp", opampLn.Addr().String(), "health", healthLn.Addr().String(), "tls", o.tlsCert != "")

	var cause error
	for cause == nil {
		select {
		case <-ctx.Done():
			cause = errStopped
		case err := <-failed:
			cause = fmt.Errorf("server failed: %w", err)
		case <-reload:
			reloadTokens(g, o, log)
		}
	}
	drainErr := drain(o, g, opamp, health, stopPolling, log)
	if errors.Is(cause, errStopped) {
		return drainErr
	}
	return errors.Join(cause, drainErr)
}

var errStopped = errors.New("stopped")

// wsPing is the gateway's WSPing for -ws-ping: 0 turns the pings off, which
// the gateway spells negative (its zero is the default).
func wsPing(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// drain shuts down in order: refuse new agents (health 503, 503 on the
// OpAMP path), stop listening and finish plain HTTP requests, close the
// WebSocket connections and wait for them, stop polling, stop the health
// endpoint.
func drain(o options, g *gateway.Gateway, opamp, health *http.Server, stopPolling func(), log *slog.Logger) error {
	log.Info("opamp-gateway draining", "agents", g.Len(), "timeout", o.drainTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), o.drainTimeout)
	defer cancel()
	drainErr := g.Drain(ctx) // first: a draining gateway refuses what still arrives
	shutdownErr := opamp.Shutdown(ctx)
	stopPolling()
	healthErr := health.Shutdown(ctx)
	if err := errors.Join(drainErr, shutdownErr, healthErr); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	log.Info("opamp-gateway drained")
	return nil
}

func reloadTokens(g *gateway.Gateway, o options, log *slog.Logger) {
	tokens, err := o.loadTokens()
	if err == nil {
		err = g.SetTokens(tokens)
	}
	if err != nil {
		log.Error("reload agent tokens: keeping the previous ones", "error", err.Error())
		return
	}
	log.Info("agent tokens reloaded", "count", len(tokens))
}
