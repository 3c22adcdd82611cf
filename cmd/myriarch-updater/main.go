// Command myriarch-updater runs on a Linux host beside an OpenTelemetry
// Collector and installs the collector versions that Myriarch offers: an
// OpAMP client of its own, linked to the collector by the collector's
// instance UID. docs/updater.md describes it.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/adapters/updater"
)

// version is the updater's own, set at build time:
// go build -ldflags "-X main.version=1.4.0" ./cmd/myriarch-updater
var version = "dev"

func main() {
	configPath := flag.String("config", "/etc/myriarch-updater/updater.yaml", "the configuration file")
	debug := flag.Bool("debug", false, "log at debug level (with the OpAMP client's lines)")
	printVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *printVersion {
		fmt.Println(version)
		return
	}
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *configPath, log); err != nil {
		log.Error("myriarch-updater", "err", err)
		os.Exit(1)
	}
}

// run reads the configuration, connects and works until ctx ends. An
// attempt interrupted by the end is resumed at the next start.
func run(ctx context.Context, configPath string, log *slog.Logger) error {
	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	s, err := cfg.secrets()
	if err != nil {
		return err
	}
	a, err := newAgent(cfg, log)
	if err != nil {
		return err
	}
	if err := a.connect(ctx, s); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	log.Info("myriarch-updater started", "version", version, "instance_uid", a.uid, "collector", a.linked(), "endpoint", cfg.Server.Endpoint)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.work(ctx)
	}()
	<-ctx.Done()
	<-done
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.client.Stop(stopCtx)
}

// newAgent builds the updater from the configuration.
func newAgent(cfg Config, log *slog.Logger) (*agent, error) {
	key, err := updater.ParsePublicKey(cfg.Verify.MinisignPublicKey)
	if err != nil {
		return nil, fmt.Errorf("verify.minisignPublicKey: %w", err)
	}
	uid, err := instanceUID(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("instance UID: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	clock := wallClock{}
	a := &agent{cfg: cfg, uid: uid, version: version, host: host, start: clock.Now(), log: log, wake: make(chan struct{}, 1)}
	a.upd, err = updater.New(updater.Config{
		StateDir:           cfg.StateDir,
		Layout:             updater.Layout{Root: cfg.Collector.Root, Binary: cfg.Collector.Binary},
		AllowedURLPrefixes: cfg.AllowedURLPrefixes,
		MaxArchiveBytes:    cfg.MaxArchiveBytes,
		PublicKey:          key,
		HTTPClient:         downloadClient(),
		Restarter:          updater.Command(cfg.Collector.RestartCommand),
		Health: updater.HTTPHealth{
			URL: cfg.Collector.HealthURL, Timeout: cfg.Collector.HealthTimeout, Interval: time.Second,
			VersionCommand: cfg.Collector.VersionCommand, Client: &http.Client{Timeout: 5 * time.Second}, Clock: clock,
		},
		Clock:  clock,
		Report: func(r updater.Report) { a.report(r) },
		Log:    log,
	})
	return a, err
}

// downloadClient bounds a download, so that a mirror that stalls fails the
// attempt instead of holding it: an answer within 30 s, the whole archive
// within 30 min (512 MiB at 300 KB/s). Proxies come from the environment.
func downloadClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t, Timeout: 30 * time.Minute}
}

// tlsConfig is nil for ws:// (the client would otherwise switch to wss://),
// the system's roots for wss://, or the configured CA's.
func tlsConfig(cfg Config) (*tls.Config, error) {
	if cfg.Server.CAFile == "" {
		if strings.HasPrefix(cfg.Server.Endpoint, "wss://") {
			return &tls.Config{MinVersion: tls.VersionTLS12}, nil
		}
		return nil, nil
	}
	pem, err := os.ReadFile(cfg.Server.CAFile)
	if err != nil {
		return nil, fmt.Errorf("server.caFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("server.caFile: no PEM certificate in it")
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// wallClock is the updater's clock in the program.
type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
