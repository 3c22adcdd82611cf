package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/myriarch/myriarch/adapters/gateway"
)

// How /healthz checks the store: each check may take healthCheckTimeout,
// and its answer stands for healthCacheFor, so that a load balancer
// checking every few seconds from each of its nodes costs one read per
// task every five seconds, not one per check. Example: checks at 12:00:00
// (store read), 12:00:03 (cached), 12:00:05 (store read).
const (
	healthCheckTimeout = 2 * time.Second
	healthCacheFor     = 5 * time.Second
)

// readiness answers whether the gateway can do its work: reach its store
// with its credentials. Concurrent callers wait for one check rather than
// each starting their own.
type readiness struct {
	check    func(context.Context) error
	now      func() time.Time
	timeout  time.Duration
	cacheFor time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	checked time.Time // zero: never
	err     error
}

func newReadiness(check func(context.Context) error, now func() time.Time, log *slog.Logger) *readiness {
	return &readiness{check: check, now: now, timeout: healthCheckTimeout, cacheFor: healthCacheFor, log: log}
}

// ready is the last answer while it is fresh, else a new check. The check
// does not end with the request that asked: a load balancer that hangs up
// must not cache a cancellation as the store's state.
func (r *readiness) ready(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.checked.IsZero() && now.Sub(r.checked) < r.cacheFor {
		return r.err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	err := r.check(cctx)
	switch {
	case err != nil && (r.err == nil || r.checked.IsZero()):
		r.log.Warn("not ready: the load balancer takes this task out of service", "error", err.Error())
	case err == nil && r.err != nil:
		r.log.Info("ready again")
	}
	r.checked, r.err = now, err
	return err
}

// Reasons /healthz gives; the detail goes to the log.
var (
	errNoCredentials    = errors.New("no AWS credentials")
	errStoreUnreachable = errors.New("store unreachable")
)

// pinger is the store's cheapest proof that it is reachable.
type pinger interface {
	Ping(ctx context.Context) error
}

// storeCheck is the readiness check of a gateway: credentials that resolve
// (a task whose role cannot be assumed has none), then one read of the
// store.
func storeCheck(creds aws.CredentialsProvider, st pinger) func(context.Context) error {
	return func(ctx context.Context) error {
		if creds == nil {
			return errNoCredentials
		}
		if _, err := creds.Retrieve(ctx); err != nil {
			return fmt.Errorf("%w: %w", errNoCredentials, err)
		}
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("%w: %w", errStoreUnreachable, err)
		}
		return nil
	}
}

// healthHandler answers the load balancer: 200 while serving and ready,
// 503 with a short reason once draining or while the store cannot be
// reached, so that no new agent is sent here.
func healthHandler(g *gateway.Gateway, r *readiness) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if g.Draining() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "draining")
			return
		}
		if err := r.ready(req.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, shortReason(err))
			return
		}
		fmt.Fprintf(w, "ok %d agents\n", g.Len())
	})
	return mux
}

// shortReason names what is wrong without the SDK's long error chain.
func shortReason(err error) string {
	for _, known := range []error{errNoCredentials, errStoreUnreachable} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "store check timed out"
	}
	return "not ready"
}
