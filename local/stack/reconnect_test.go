package stack

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// TestGatewayTaskReplaced_DuringHealthWait_RolloutCompletes: agents reach the
// gateway through a load balancer (a TCP forwarder here). While targets are
// in their health wait, the balancer drops every connection and, after three
// seconds in which it refuses new ones (the new task registering), sends the
// agents to another gateway task over the same store. The task that lost them records them offline; within the
// reconnect grace that is no failure, and the rollout completes.
func TestGatewayTaskReplaced_DuringHealthWait_RolloutCompletes(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startTestStack(t, ctx, "blip-test-", nil)
	second, err := s.AddGateway("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := newForwarder(t, hostOf(s.GatewayURL))
	healthWaitSurvives(t, ctx, s, lb, "blip-1", func() { lb.switchTo(hostOf(second), 3*time.Second) })
}

// TestGatewayTaskKilled_DuringHealthWait_RolloutCompletes: the task holding
// the agents is a gateway process killed with SIGKILL during the health
// wait. It writes nothing more: its agents' records still name it and its
// lease stays until it runs out. The agents reconnect through the balancer
// to the other task, which takes their records over, and the rollout
// completes.
func TestGatewayTaskKilled_DuringHealthWait_RolloutCompletes(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	bin := buildGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startTestStack(t, ctx, "kill-test-", func(o *Options) { o.GatewayBinary, o.GatewayStderr = bin, io.Discard })
	if s.Gateway == nil || s.Gateway.PID() == 0 {
		t.Fatal("no gateway process")
	}
	second, err := s.AddGateway("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := newForwarder(t, hostOf(s.GatewayURL))
	healthWaitSurvives(t, ctx, s, lb, "kill-1", func() {
		if err := s.Gateway.Kill(); err != nil {
			t.Fatal(err)
		}
		lb.switchTo(hostOf(second), 3*time.Second)
	})
}

// healthWaitSurvives connects six agents through lb, starts a version
// rollout with an 8 s health wait, calls disrupt while a target is in it,
// and requires the rollout to complete with every target succeeded.
func healthWaitSurvives(t *testing.T, ctx context.Context, s *Stack, lb *forwarder, commit string, disrupt func()) {
	t.Helper()
	const n = 6
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = n, "ws://"+lb.addr()+"/v1/opamp", s.AgentToken, 10
	connectFleet(t, ctx, s, cfg)
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "8s")
	if err := s.apply(ctx, c, files, commit); err != nil {
		t.Fatal(err)
	}
	selected := selectVersion(ctx, t, c, "0.162.0")
	waitFor(ctx, t, "a target in its health wait", func() bool {
		var r rolloutView
		return c.do(ctx, "GET", "/api/v1/rollouts/"+selected, nil, &r) == nil && r.TargetCounts["verifying"] > 0
	})
	disrupt()
	var r rolloutView
	waitFor(ctx, t, "the rollout to end", func() bool {
		if err := c.do(ctx, "GET", "/api/v1/rollouts/"+selected, nil, &r); err != nil {
			return false
		}
		switch r.Status {
		case "completed", "paused", "failed", "rolling_back", "rolled_back", "aborted", "superseded":
			return true
		}
		return false
	})
	if r.Status != "completed" || r.TargetCounts["succeeded"] != n {
		t.Fatalf("rollout %s is %s (%s), targets %v: a reconnect within the grace must not fail targets", r.ID, r.Status, r.StatusReason, r.TargetCounts)
	}
	if lb.switched() == 0 {
		t.Fatal("the balancer dropped no connection: the test did not test a reconnect")
	}
}

func hostOf(url string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(url, "ws://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	return h
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
}

// forwarder is a TCP load balancer with one backend at a time; switchTo
// drops every open connection and sends new ones to another backend.
type forwarder struct {
	t       *testing.T
	ln      net.Listener
	mu      sync.Mutex
	backend string
	refuse  time.Time // connections before it are closed at once
	conns   map[net.Conn]struct{}
	dropped int
}

func newForwarder(t *testing.T, backend string) *forwarder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{t: t, ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { _ = ln.Close(); f.dropAll() })
	go f.serve()
	return f
}

func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		backend, refuse := f.backend, time.Now().Before(f.refuse)
		f.mu.Unlock()
		if refuse {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", backend)
		if err != nil {
			_ = in.Close()
			continue
		}
		f.track(in, out)
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (f *forwarder) track(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
}

func (f *forwarder) switchTo(backend string, refuseFor time.Duration) {
	f.mu.Lock()
	f.backend, f.refuse = backend, time.Now().Add(refuseFor)
	f.mu.Unlock()
	f.dropAll()
}

func (f *forwarder) dropAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		_ = c.Close()
		f.dropped++
	}
	f.conns = map[net.Conn]struct{}{}
}

func (f *forwarder) switched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}
