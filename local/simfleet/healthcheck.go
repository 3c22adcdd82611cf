package simfleet

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ProbeAttribute is the non-identifying attribute that carries the address
// of an agent's health check with Config.HealthCheck: "127.0.0.1:<port>".
// host.name stays sim-01 …, the name operators know the agent by; a probe
// reads this attribute as its {host}, with the template http://{host}/.
const ProbeAttribute = "myriarch.probe.address"

// probeTimeout bounds how long a probe may take to send its request.
const probeTimeout = 5 * time.Second

// serveHealthCheck starts the agent's health_check extension on a loopback
// port of its own, chosen by the system: all agents share one host, so the
// port tells them apart where a real fleet has one host each.
func (a *agent) serveHealthCheck() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("health check of agent %s: %w", HostName(a.n), err)
	}
	a.healthCheck = &http.Server{Handler: http.HandlerFunc(a.answerProbe), ReadHeaderTimeout: probeTimeout}
	go func() { _ = a.healthCheck.Serve(ln) }() // ends with ErrServerClosed on stop
	a.mu.Lock()
	a.attrs = map[string]string{ProbeAttribute: ln.Addr().String()}
	a.mu.Unlock()
	return nil
}

// probeAnswer is the body of the collector's health_check extension.
type probeAnswer struct {
	Status  string    `json:"status"`
	UpSince time.Time `json:"upSince"`
	Uptime  string    `json:"uptime"`
}

// answerProbe answers every path as the extension does at its default path
// "/": 200 while the collector is healthy and its exporters deliver, 503
// while it restarts, is unhealthy, or fails exports (any share of them).
func (a *agent) answerProbe(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	ready := a.health.healthy && a.traffic.failing() == 0
	upSince := a.health.startTime
	a.mu.Unlock()
	code, answer := http.StatusServiceUnavailable, probeAnswer{Status: "Server not available"}
	if ready {
		code, answer = http.StatusOK, probeAnswer{Status: "Server available", UpSince: upSince, Uptime: a.cfg.Clock.Now().Sub(upSince).String()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(answer)
}
