package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// wavePolicy is one wave of every agent of fleet edge, all at once
// (maxConcurrent 0, docs/policy.md), with a short health wait.
const wavePolicy = `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: wave}
spec:
  waves: [{name: all, percent: 100}]
  maxConcurrent: 0
  healthWait: 3s
  applyTimeout: 2m
`

// BenchmarkWaveTransitionLatency rolls a configuration out to a wave of
// MYRIARCH_WAVE_AGENTS (default 1,000) simulated agents that start together,
// on the local stack, and measures per target:
//
//   - push: from the engine's decision (the target's startedAt, the pass's
//     now before its SetDesiredHash) until the agent received the
//     configuration (it reported APPLYING for the new hash);
//   - report: from the agent's APPLIED report until the target's transition
//     to verifying (its health wait), once as the engine decided it (the
//     target's verifiedAt, the now of the pass) and once as stored (first
//     seen in the targets table, a sample of 50 targets polled every 100 ms);
//     The decided latency is split at the gateway's receive time of the
//     report (the target's reportedAt, the agent's RemoteConfig.Since):
//     report-to-gateway, then gateway-to-decided (the gateway's write,
//     the stream, the pass);
//   - all: from the first target's start until every agent received the
//     configuration (the wave's push) and until the rollout completed;
//   - DynamoDB: requests and items of the stack's store from the change
//     until the sampled targets were stored verifying.
//
// The agents' times are taken in this process from the fleet's change
// notifications (the same clock as the stack's). Reported in milliseconds
// (p50, p95, max) with b.ReportMetric; `make bench-wave` runs it once.
func BenchmarkWaveTransitionLatency(b *testing.B) {
	storetest.Client(b)
	n, warm := envInt(b, "MYRIARCH_WAVE_AGENTS", 1000), envInt(b, "MYRIARCH_WAVE_WARMUP", 0)
	for i := 0; i < b.N; i++ {
		runWave(b, n, warm, fmt.Sprintf("wave-bench-%d-", i))
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
		b.Fatalf("%s=%q: want a whole number", name, v)
	}
	return n
}

// runWave measures one wave of n agents after warm unmeasured waves of the
// same size: those let DynamoDB Local's JIT compiler finish (its compiler
// threads take 30-150 % of a core for the first 45 s or so, docs/scale.md), so
// that the measured wave shows the stack in a steady state.
func runWave(b *testing.B, n, warm int, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if os.Getenv("MYRIARCH_WAVE_LOG") != "" {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: prefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now,
		PlannerEvery: time.Hour, Log: log})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		b.Fatal(err)
	}
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: wave", 1))
	files["policies/wave.yaml"] = []byte(wavePolicy)
	if err := s.apply(ctx, c, files, "wave-1"); err != nil {
		b.Fatal(err)
	}
	first := revision.Hash(files["configs/edge.yaml"])

	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.Heartbeat = n, s.GatewayURL, s.AgentToken, 10, 30*time.Second
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = fleet.Stop() }()
	settle := func(hash string) {
		if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool {
			return a.ConfigHash == hash && a.ConfigStatus == "APPLIED" && a.Healthy && !a.Busy
		})); err != nil {
			b.Fatalf("the agents never settled on configuration %s: %v", hash, err)
		}
		// The stack too: the agents' first connections and reports
		// (assigned, planned, evaluated) must be through the stream before
		// the wave, or the wave's reports queue behind that backlog (it was
		// 15 s deep).
		if err := s.agentEventsQuiet(ctx, 2*time.Second); err != nil {
			b.Fatalf("the agent stream never went quiet: %v", err)
		}
	}
	// change gives fleet edge a new configuration (a comment line more)
	// and returns its hash.
	change := func(comment string) string {
		files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte("# "+comment+"\n")...)
		return revision.Hash(files["configs/edge.yaml"])
	}
	settle(first)
	for w := 0; w < warm; w++ {
		hash := change("warm-up")
		id, err := s.applyForRollout(ctx, c, files, fmt.Sprintf("warm-%d", w))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.watch(ctx, c, id, func(string, ...any) {}, "completed"); err != nil {
			b.Fatal(err)
		}
		settle(hash)
	}

	// The change: a new configuration of fleet edge, one rollout, one wave.
	next := change("wave")
	obs := observe(fleet, next)
	b.ResetTimer()
	s.Deps.Store.ResetUsage()
	began := time.Now()
	id, err := s.applyForRollout(ctx, c, files, "wave-2")
	if err != nil {
		b.Fatal(err)
	}
	stored := pollVerifying(ctx, s, id)
	seen := stored()
	// What the stack's store (engine, agent events, gateway, API, this
	// benchmark's polling) asked of DynamoDB Local until the sampled
	// targets were stored verifying: the emulator's load during the wave.
	usage, busy := s.Deps.Store.Usage(), time.Since(began)
	if _, err := s.watch(ctx, c, id, func(string, ...any) {}, "completed"); err != nil {
		b.Fatal(err)
	}
	completed := time.Now()
	b.StopTimer()
	_, ts, err := s.Deps.Store.LoadRollout(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	got, applied := obs.times()
	var push, decided, store, received, engineSide []time.Duration
	var firstStart, lastGot time.Time
	for _, t := range ts {
		if t.Status != rollout.TargetSucceeded || t.StartedAt == nil || t.VerifiedAt == nil {
			b.Fatalf("target %s is %s (%s)", t.AgentID, t.Status, t.Reason)
		}
		if firstStart.IsZero() || t.StartedAt.Before(firstStart) {
			firstStart = *t.StartedAt
		}
		g, ok1 := got[t.AgentID]
		a, ok2 := applied[t.AgentID]
		if !ok1 || !ok2 {
			b.Fatalf("target %s: received %v, applied %v", t.AgentID, ok1, ok2)
		}
		if g.After(lastGot) {
			lastGot = g
		}
		push = append(push, g.Sub(*t.StartedAt))
		decided = append(decided, t.VerifiedAt.Sub(a))
		if t.ReportedAt != nil { // the gateway's receive time of the APPLIED report
			received = append(received, t.ReportedAt.Sub(a))
			engineSide = append(engineSide, t.VerifiedAt.Sub(*t.ReportedAt))
		}
		if v, ok := seen[t.AgentID]; ok {
			store = append(store, v.Sub(a))
		}
	}
	report := func(name string, ds []time.Duration) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(ms(ds[len(ds)/2]), name+"-p50-ms")
		b.ReportMetric(ms(ds[len(ds)*95/100]), name+"-p95-ms")
		b.ReportMetric(ms(ds[len(ds)-1]), name+"-max-ms")
	}
	report("push", push)
	report("report-decided", decided)
	report("report-to-gateway", received)    // sent → the gateway handled it (RemoteConfig.Since)
	report("gateway-to-decided", engineSide) // → stored by the gateway, streamed, evaluated
	if len(store) == 0 {
		b.Fatal("no sampled target was seen stored verifying")
	}
	report("report-stored", store)
	b.ReportMetric(ms(lastGot.Sub(firstStart)), "all-received-ms")
	b.ReportMetric(ms(completed.Sub(firstStart)), "completed-ms")
	b.ReportMetric(float64(usage.Requests), "ddb-requests")
	b.ReportMetric(float64(usage.ItemsWritten), "ddb-items-written")
	b.ReportMetric(float64(usage.ItemsRead), "ddb-items-read")
	b.ReportMetric(float64(usage.Requests)/busy.Seconds(), "ddb-requests/s")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waveObserver records, per agent, when it first reported the new hash
// (APPLYING: it received the configuration) and when it reported it APPLIED.
type waveObserver struct {
	mu           sync.Mutex
	got, applied map[string]time.Time
	stop         func()
}

func observe(fleet *simfleet.Fleet, hash string) *waveObserver {
	o := &waveObserver{got: map[string]time.Time{}, applied: map[string]time.Time{}}
	// Watched, not waited for: a Wait's snapshot of the 1,000 agents can
	// come after several changes, and would time them all at its own now.
	o.stop = fleet.Watch(func(a simfleet.AgentState) {
		if a.ConfigHash != hash {
			return
		}
		now := time.Now()
		o.mu.Lock()
		defer o.mu.Unlock()
		if _, ok := o.got[a.InstanceUID]; !ok {
			o.got[a.InstanceUID] = now
		}
		if _, ok := o.applied[a.InstanceUID]; !ok && a.ConfigStatus == "APPLIED" {
			o.applied[a.InstanceUID] = now
		}
	})
	return o
}

func (o *waveObserver) times() (got, applied map[string]time.Time) {
	o.stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.got, o.applied
}

// storedSample is how many targets pollVerifying watches: the first of the
// wave in key order (agent ids are seeded UUIDs, so in no relation to the
// order of the push). A sample, so that the polling (its items read every
// 100 ms) stays small beside the passes' 2,000 items each.
const storedSample = 50

// pollVerifying reads a sample of the rollout's targets every 100 ms and
// records when each was first stored past in_progress (verifiedAt set);
// the returned function waits until every sampled target was seen so (or
// ctx ends) and returns the times.
func pollVerifying(ctx context.Context, s *Stack, id string) func() map[string]time.Time {
	seen := map[string]time.Time{}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			p, err := s.Deps.Store.TargetsPage(ctx, id, 0, "", storedSample)
			now := time.Now()
			if err == nil {
				for _, t := range p.Items {
					if _, ok := seen[t.AgentID]; !ok && t.VerifiedAt != nil {
						seen[t.AgentID] = now
					}
				}
				if len(p.Items) > 0 && len(seen) == len(p.Items) {
					return
				}
			}
			_ = sleep(ctx, 100*time.Millisecond)
		}
	}()
	return func() map[string]time.Time {
		<-done
		stop()
		return seen
	}
}
