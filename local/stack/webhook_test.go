package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/webhook"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/examples/webhook-receiver/receiver"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// hookObject is the executor object of the test: the receiver at url,
// signed with the secret edge-hook, cancels sent.
func hookObject(url string) string {
	return `apiVersion: myriarch.dev/v1alpha1
kind: Executor
metadata: {name: edge-hook}
spec:
  type: webhook
  webhook:
    url: ` + url + `/myriarch
    secretRef: edge-hook
    timeout: 5s
    retryFor: 10s
    cancel: true
`
}

// A version rollout through the webhook executor on the local stack: the
// fleet names an executor object pointing at the example receiver, which
// verifies each signed delivery and installs the version on the simulated
// collector it names; the rollout completes because the collectors then
// report it. Before that, a first selection is superseded while its update
// is in flight (the receiver holds it, as a slow job would): the receiver
// gets a cancel for it, with the delivery id of its start's target.
func TestWebhookRollout_CompletesAndCancelsOnSupersede(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // the other end-to-end tests have stacks of their own
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, fleet := webhookStack(t, ctx, "webhook-test-")

	const held = "0.162.0" // its installs never finish: the first rollout stays in flight
	var mu sync.Mutex
	var cancels []webhook.Delivery
	rc := &receiver.Receiver{Secret: "e2e-signing-secret", Now: time.Now,
		Install: func(host, version string) error {
			if version == held {
				return nil
			}
			return fleet.Install(host, version)
		},
		Cancel: func(d webhook.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			cancels = append(cancels, d)
			return nil
		}}
	sent := &deliveryCounter{next: rc}
	hook := httptest.NewServer(sent)
	defer hook.Close()

	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "1s")
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "executor: updater", "executor: webhook\n    executorRef: edge-hook", 1))
	files["executors/edge-hook.yaml"] = []byte(hookObject(hook.URL))
	c := client{base: s.APIURL, token: s.AdminToken}
	if err := s.apply(ctx, c, files, "webhook-1"); err != nil {
		t.Fatal(err)
	}

	first := selectVersion(ctx, t, c, held)
	var started []rollout.Target // stored as in progress: a supersede cancels them
	waitFor(ctx, t, "the first rollout's update in flight", func() bool {
		_, ts, err := s.Deps.Store.LoadRollout(ctx, first)
		started = ts
		return err == nil && slices.ContainsFunc(ts, func(t rollout.Target) bool { return t.Status == rollout.TargetInProgress && t.ExternalRef != "" })
	})
	second := selectVersion(ctx, t, c, "0.163.0")
	r, ts := waitRollout(ctx, t, s, second, rollout.Completed)

	if r.ExecutorObject == nil || r.ExecutorObject.Name != "edge-hook" || r.Executor != "webhook" {
		t.Errorf("rollout executor %q object %+v, want the snapshot of edge-hook", r.Executor, r.ExecutorObject)
	}
	starts := map[string]string{} // delivery id by agent, of the second rollout
	for _, d := range rc.Deliveries() {
		if d.Rollout.ID == second && d.Operation == "start" {
			starts[d.Agent.ID] = d.DeliveryID
		}
	}
	for _, tg := range ts {
		if tg.Status != rollout.TargetSucceeded || !strings.HasPrefix(tg.ExternalRef, "job-") {
			t.Errorf("target %s is %s with external reference %q, want succeeded with the receiver's job", tg.AgentID, tg.Status, tg.ExternalRef)
		}
		if starts[tg.AgentID] != executor.DeliveryID(second, tg.AgentID, tg.Attempt, "start") {
			t.Errorf("target %s: delivery %q, want the id of its start", tg.AgentID, starts[tg.AgentID])
		}
	}
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.Version == "0.163.0" })); err != nil {
		t.Fatalf("the collectors do not all report 0.163.0: %v", err)
	}

	if twice := sent.repeated(); len(twice) > 0 {
		t.Errorf("deliveries sent more than once although the receiver accepted the first: %v", twice)
	}

	old, _, err := s.Deps.Store.LoadRollout(ctx, first)
	if err != nil || old.Status != rollout.Superseded {
		t.Fatalf("first rollout %s (%v), want superseded", old.Status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var want, got []string
	for _, tg := range started {
		if tg.Status == rollout.TargetInProgress {
			want = append(want, executor.DeliveryID(first, tg.AgentID, tg.Attempt, "cancel"))
		}
	}
	for _, d := range cancels {
		if d.Rollout.ID != first || d.ToVersion != held {
			t.Errorf("cancel %+v, want one of the first rollout's update to %s", d, held)
		}
		got = append(got, d.DeliveryID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("cancels %v, want %v: one per target in flight, with the delivery id of its cancel", got, want)
	}
}

// deliveryCounter counts the requests of each delivery id before the
// receiver sees them. The receiver answers every request 2xx, so nothing
// has to be sent again: a second request of one delivery id is a second
// executor call for one decision. With holdNth, the first request of the
// holdNth distinct start delivery waits for release before it goes on, as
// an answer that takes a while would (its id is sent to held).
type deliveryCounter struct {
	next    http.Handler
	holdNth int
	held    chan string // buffered
	release chan struct{}

	mu     sync.Mutex
	n      map[string]int
	starts int
}

func (c *deliveryCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(webhook.HeaderDelivery)
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
	hold := false
	if c.n[id] == 1 && r.Header.Get(webhook.HeaderEvent) == "start" {
		c.starts++
		hold = c.starts == c.holdNth
	}
	c.mu.Unlock()
	if hold {
		c.held <- id
		select {
		case <-c.release:
		case <-r.Context().Done():
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

// repeated lists the delivery ids sent more than once, with their counts.
func (c *deliveryCounter) repeated() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id, n := range c.n {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s×%d", id, n))
		}
	}
	slices.Sort(out)
	return out
}

// A target starts once per attempt, also when another evaluation stores a
// change of the rollout while its starts are under way. The pass that
// starts wave rest (the state machine's, at the end of wave early's health
// wait) is held up by the receiver's first answer; meanwhile the collector
// of wave early is relabelled, and its agent event stores its target
// succeeded (its health wait is over). The held pass, which stores that
// target too, then lost its save, read again, found wave rest still
// pending and sent every start of it a second time with the same delivery
// id, about 0.25 s after the first (or an agent event's whole pass did, at
// the same time). Now the pass claims the starts before it calls the
// receiver, and whoever reads them after finds them in progress.
func TestWebhookRollout_StartsEachTargetOnceWhileAnotherPassEvaluates(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, fleet := webhookStack(t, ctx, "webhook-once-")
	rc := &receiver.Receiver{Secret: "e2e-signing-secret", Now: time.Now, Install: fleet.Install}
	// wave early is one target of five: the second start is wave rest's first
	sent := &deliveryCounter{next: rc, holdNth: 2, held: make(chan string, 1), release: make(chan struct{})}
	hook := httptest.NewServer(sent)
	defer hook.Close()
	released := false
	release := func() {
		if !released {
			released = true
			close(sent.release)
		}
	}
	defer release()

	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "1s")
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "executor: updater", "executor: webhook\n    executorRef: edge-hook", 1))
	// the held answer must not time out: a retry after a failed call is
	// another matter
	files["executors/edge-hook.yaml"] = []byte(strings.Replace(hookObject(hook.URL), "timeout: 5s", "timeout: 60s", 1))
	c := client{base: s.APIURL, token: s.AdminToken}
	if err := s.apply(ctx, c, files, "webhook-once"); err != nil {
		t.Fatal(err)
	}
	id := selectVersion(ctx, t, c, "0.163.0")
	select {
	case <-sent.held:
	case <-ctx.Done():
		t.Fatal("wave rest never started")
	}
	ds := rc.Deliveries()
	var n int
	if len(ds) != 1 {
		t.Fatalf("%d deliveries accepted before wave rest, want wave early's start", len(ds))
	}
	if _, err := fmt.Sscanf(ds[0].Agent.Host, "sim-%d", &n); err != nil {
		t.Fatalf("host %q of wave early: %v", ds[0].Agent.Host, err)
	}
	if err := fleet.SetAttributes(n, map[string]string{"labels.team": "blue"}); err != nil {
		t.Fatal(err)
	}
	other, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	waitFor(other, t, "another evaluation to store wave early's target while wave rest's start is held", func() bool {
		_, ts, err := s.Deps.Store.LoadRollout(ctx, id)
		return err == nil && slices.ContainsFunc(ts, func(tg rollout.Target) bool { return tg.Wave == 0 && tg.Status == rollout.TargetSucceeded })
	})
	release()
	_, ts := waitRollout(ctx, t, s, id, rollout.Completed)

	if twice := sent.repeated(); len(twice) > 0 {
		t.Errorf("deliveries sent more than once although the receiver accepted the first: %v", twice)
	}
	for _, tg := range ts {
		if !strings.HasPrefix(tg.ExternalRef, "job-") {
			t.Errorf("target %s: external reference %q, want the receiver's job", tg.AgentID, tg.ExternalRef)
		}
	}
}

// selectVersion selects a collector version for fleet edge as an operator
// does and returns the rollout it created.
func selectVersion(ctx context.Context, t *testing.T, c client, version string) string {
	t.Helper()
	id, err := selectFleetVersion(ctx, c, "edge", version, "local/stack e2e")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitRollout polls the store until the rollout is final; another final
// status than want fails the test.
func waitRollout(ctx context.Context, t *testing.T, s *Stack, id string, want rollout.Status) (rollout.Rollout, []rollout.Target) {
	t.Helper()
	for {
		r, ts, err := s.Deps.Store.LoadRollout(ctx, id)
		if err == nil && (r.Status.Final() || r.Status == rollout.Failed || r.Status == rollout.Paused) {
			if r.Status != want {
				t.Fatalf("rollout %s is %s (%s), want %s; targets %s", id, r.Status, r.StatusReason, want, targetSummary(ts))
			}
			return r, ts
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			t.Fatalf("rollout %s is %s (%s): %v; targets %s", id, r.Status, r.StatusReason, err, targetSummary(ts))
		}
	}
}

func targetSummary(ts []rollout.Target) string {
	var parts []string
	for _, tg := range ts {
		parts = append(parts, fmt.Sprintf("%s:%s(%s)", tg.AgentID[:min(8, len(tg.AgentID))], tg.Status, tg.Reason))
	}
	return strings.Join(parts, " ")
}

// webhookStack is a local stack whose webhook executor signs with the
// e2e secret, and five simulated collectors connected to it.
func webhookStack(t *testing.T, ctx context.Context, tablePrefix string) (*Stack, *simfleet.Fleet) {
	t.Helper()
	secretsDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(secretsDir, "edge-hook"), []byte("e2e-signing-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: tablePrefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now,
		PlannerEvery: time.Hour, SecretsDir: secretsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = 5, s.GatewayURL, s.AgentToken, 10
	return s, connectFleet(t, ctx, s, cfg)
}
