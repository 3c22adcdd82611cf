// Command webhook-receiver is an example receiver of Myriarch's webhook
// executor in front of a simulated fleet: it starts -n simulated
// collectors (local/simfleet) against a gateway, verifies every webhook
// request with the signing secret, de-duplicates by delivery id, and
// "updates" the collector a start or reset names by installing the version
// on its simulated host. The rollout completes when the collectors report
// the version, as real ones would after a real deployment job.
//
//	export MYRIARCH_SECRET_EDGE_HOOK=$(openssl rand -hex 32)   # the stack reads it too
//	go run ./examples/webhook-receiver -listen 127.0.0.1:9090 -n 10 \
//	  -endpoint ws://127.0.0.1:4320/v1/opamp -token "$MYRIARCH_AGENT_TOKEN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/webhook"
	"github.com/myriarch/myriarch/examples/webhook-receiver/receiver"
	"github.com/myriarch/myriarch/local/simfleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// options of the receiver; the rest are the simulation's.
type options struct {
	listen, secretEnv, secretFile string
}

// run serves until ctx is done; ready, when set, hears the receiver's URL.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(url string)) error {
	cfg, opts, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	secret, err := readSecret(opts, getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.Logger = log
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = fleet.Stop() }()
	rc := &receiver.Receiver{Secret: secret, Now: time.Now, Log: log, Install: fleet.Install,
		Cancel: func(d webhook.Delivery) error {
			log.Info("cancel: a simulated install cannot be withdrawn once begun", "rollout", d.Rollout.ID, "agent", d.Agent.ID)
			return nil
		}}
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	url := "http://" + ln.Addr().String()
	log.Info("receiving webhook deliveries", "url", url, "agents", cfg.N, "endpoint", cfg.Endpoint)
	if ready != nil {
		ready(url)
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (simfleet.Config, options, error) {
	cfg := simfleet.DefaultConfig()
	opts := options{}
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.listen, "listen", "127.0.0.1:9090", "address of the receiver (the executor object's url)")
	fs.StringVar(&opts.secretEnv, "secret-env", "MYRIARCH_SECRET_EDGE_HOOK", "variable that holds the signing secret")
	fs.StringVar(&opts.secretFile, "secret-file", "", "file that holds the signing secret (instead of -secret-env)")
	fs.IntVar(&cfg.N, "n", 10, "number of simulated collectors")
	fs.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "OpAMP endpoint of the gateway")
	fs.StringVar(&cfg.Token, "token", getenv("MYRIARCH_AGENT_TOKEN"), "agents' bearer token (default $MYRIARCH_AGENT_TOKEN)")
	fs.StringVar(&cfg.StartVersion, "version", cfg.StartVersion, "collector version at start")
	fs.Float64Var(&cfg.Speed, "speed", 1, "divides every simulated delay")
	if err := fs.Parse(args); err != nil {
		return cfg, opts, err
	}
	return cfg, opts, nil
}

func readSecret(o options, getenv func(string) string) (string, error) {
	if o.secretFile != "" {
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil // as the stack reads it
	}
	if s := getenv(o.secretEnv); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("no signing secret: set %s or pass -secret-file", o.secretEnv)
}
