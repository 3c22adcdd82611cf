package main

import (
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/myriarch/myriarch/adapters/gateway"
)

// checkDebugListen accepts an address for the debug listener only on a
// loopback host (127.0.0.0/8, ::1 or localhost): profiles show what the
// process holds, tokens among it, and the endpoint has no authentication,
// so it is reached through the host itself (an SSH tunnel, ECS Exec), never
// through the network. "" leaves the listener off.
func checkDebugListen(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-debug-listen %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-debug-listen %q: want a loopback address such as 127.0.0.1:6060", addr)
	}
	return nil
}

// debugHandler serves net/http/pprof under /debug/pprof/ (go tool pprof
// http://127.0.0.1:6060/debug/pprof/profile?seconds=60).
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	return mux
}

// publishStats shows the gateway's refusals (gateway.Stats) as the expvar
// "gateway" under /debug/vars; the newest gateway of the process, since
// expvar names are for a process's life.
func publishStats(g *gateway.Gateway) {
	current.Store(g)
	publishOnce.Do(func() {
		expvar.Publish("gateway", expvar.Func(func() any { return current.Load().Stats() }))
	})
}

var (
	current     atomic.Pointer[gateway.Gateway]
	publishOnce sync.Once
)

// serveDebug starts the debug listener when one is configured and returns
// its server (nil when off). A listener that cannot start is logged and
// the gateway serves on without it: profiles are for people, agents do not
// depend on them.
func serveDebug(addr string, log *slog.Logger) *http.Server {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("debug listener", "listen", addr, "error", err)
		return nil
	}
	srv := &http.Server{Handler: debugHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("opamp-gateway debug listener", "listen", ln.Addr().String())
	return srv
}
