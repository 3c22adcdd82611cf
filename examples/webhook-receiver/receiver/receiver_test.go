package receiver

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/executor/webhook"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// installs records what the receiver asked of the fleet.
type installs struct {
	mu   sync.Mutex
	done []string
}

func (in *installs) install(host, version string) error {
	if host == "unknown" {
		return errors.New("no such host in the inventory")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.done = append(in.done, host+"@"+version)
	return nil
}

func (in *installs) list() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return strings.Join(in.done, " ")
}

// The webhook executor against the example receiver: signed deliveries are
// done once, whatever the number of copies.
func TestReceiver_WithTheWebhookExecutor(t *testing.T) {
	in := &installs{}
	var cancelled []string
	rc := &Receiver{Secret: "k", Now: func() time.Time { return t0 }, Install: in.install,
		Cancel: func(d webhook.Delivery) error { cancelled = append(cancelled, d.DeliveryID); return nil }}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	obj := executorobject.Object{Name: "edge-hook", Type: executorobject.TypeWebhook,
		Webhook: &executorobject.Webhook{URL: srv.URL, SecretRef: "edge-hook", Cancel: true}}.WithDefaults()
	r := rollout.Rollout{ID: "r1", Fleet: "edge", Kind: policy.KindVersion, ToRef: "0.162.0", ExecutorObject: &obj}
	target := rollout.Target{RolloutID: "r1", AgentID: "a1", Attempt: 1, FromRef: "0.161.0", ToRef: "0.162.0"}
	a := agent.Agent{ID: "a1", Attributes: map[string]string{"host.name": "sim-01"}}
	e := webhook.Executor{Secrets: secrets.Map{"edge-hook": "k"}, Now: func() time.Time { return t0 }}
	ctx := context.Background()

	start := executor.Call{Rollout: r, Target: target, Agent: a, Version: "0.162.0", Operation: executor.OpStart}
	for range 2 { // the engine repeats a Start: the same delivery
		if ref, err := e.Start(ctx, start); err != nil || ref != "job-1" {
			t.Fatalf("start: ref %q err %v, want job-1 both times", ref, err)
		}
	}
	reset := start
	reset.Operation, reset.Version = executor.OpReset, "0.161.0"
	if _, err := e.Start(ctx, reset); err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(ctx, executor.Call{Rollout: r, Target: target, Operation: executor.OpCancel}); err != nil {
		t.Fatal(err)
	}
	if got := in.list(); got != "sim-01@0.162.0 sim-01@0.161.0" {
		t.Errorf("installs %q, want the start once, then the reset", got)
	}
	if len(cancelled) != 1 || cancelled[0] != executor.DeliveryID("r1", "a1", 1, "cancel") {
		t.Errorf("cancels %v", cancelled)
	}
	if n := len(rc.Deliveries()); n != 3 {
		t.Errorf("%d deliveries recorded, want 3", n)
	}

	// What fails the target: a host the receiver does not know, a wrong secret.
	unknown := start
	unknown.Target.Attempt, unknown.Agent.Attributes = 2, map[string]string{"host.name": "unknown"}
	if _, err := e.Start(ctx, unknown); err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("unknown host: %v", err)
	}
	wrong := webhook.Executor{Secrets: secrets.Map{"edge-hook": "guess"}, Now: e.Now}
	if _, err := wrong.Start(ctx, start); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong secret: %v", err)
	}
}
