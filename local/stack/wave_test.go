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

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// wavePolicy is one wave of every agent of fleet edge, all at once
// (maxConcurrent 0, docs/policy.md), with a health wait of 10 s: as short
// as keeps the benchmark quick, and no shorter than route.ApplyCap, so
// that the state machine looks at the wave as it does at one with the
// default wait of 60 s (once when the cap ends, once when the waits end).
// A health wait shorter than the cap wakes it once per health wait while
// any target still applies: with 3 s, the wave was evaluated whole two or
// three times, as its 1,000 reports came before or after the first wake-up
// (about 750 bytes a target each), which no wave with a production health
// wait does.
const wavePolicy = `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: wave}
spec:
  waves: [{name: all, percent: 100}]
  maxConcurrent: 0
  healthWait: 10s
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
		w := runWave(b, n, warm, fmt.Sprintf("wave-bench-%d-", i), 1, func(waveRun) bool { return true })[0]
		w.report(b)
		fmt.Printf("what the stack asked of DynamoDB to create the rollout (the apply), per target:\n%s", w.created.Table(float64(n)))
		fmt.Printf("what the stack asked of DynamoDB from the rollout's creation until it completed, per target:\n%s", w.usage.Table(float64(n)))
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

// waveRun is what one measured wave gave.
type waveRun struct {
	n int
	// usage is what the stack's store and its stream pollers asked of
	// DynamoDB from the rollout's creation until it completed, per kind of
	// call; created what its creation asked (the apply). The benchmark's
	// own sampling and waiting are in neither.
	usage, created usage.Kinds
	// the latencies, per target
	push, decided, received, engineSide, stored []time.Duration
	allReceived, completed                      time.Duration
	counted                                     time.Duration // from the usage's reset until the rollout completed
}

func (w waveRun) report(b *testing.B) {
	report := func(name string, ds []time.Duration) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(ms(ds[len(ds)/2]), name+"-p50-ms")
		b.ReportMetric(ms(ds[len(ds)*95/100]), name+"-p95-ms")
		b.ReportMetric(ms(ds[len(ds)-1]), name+"-max-ms")
	}
	report("push", w.push)
	report("report-decided", w.decided)
	report("report-to-gateway", w.received)    // sent → the gateway handled it (RemoteConfig.Since)
	report("gateway-to-decided", w.engineSide) // → stored by the gateway, streamed, evaluated
	report("report-stored", w.stored)
	b.ReportMetric(ms(w.allReceived), "all-received-ms")
	b.ReportMetric(ms(w.completed), "completed-ms")
	t, per := w.usage.Total(), float64(w.n)
	b.ReportMetric(float64(t.Requests)/per, "ddb-requests/target")
	b.ReportMetric(float64(t.BytesRead)/per, "ddb-bytes-read/target")
	b.ReportMetric(float64(t.ItemsRead)/per, "ddb-items-read/target")
	b.ReportMetric(float64(t.ItemsWritten)/per, "ddb-items-written/target")
	b.ReportMetric(t.ReadUnits/per, "ddb-RCU/target")
	b.ReportMetric(t.WriteUnits/per, "ddb-WCU/target")
}

// runWave measures one wave of n agents after warm unmeasured waves of the
// same size: those let DynamoDB Local's JIT compiler finish (its compiler
// threads take 30-150 % of a core for the first 45 s or so, docs/scale.md), so
// that the measured wave shows the stack in a steady state.
//
// It measures waves until accept takes one, at most maxWaves, and returns
// those it measured: a wave of 100 can meet a stack busy with something
// else (docs/scale.md, "Reads per decided report"), the next one in the
// same stack does not.
func runWave(tb testing.TB, n, warm int, prefix string, maxWaves int, accept func(waveRun) bool) []waveRun {
	// Minutes for the fleet to connect and settle, more for a larger one
	// on a busy machine (1,000 agents never settled within 5 minutes beside
	// two other test runs).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(n)*300*time.Millisecond)
	defer cancel()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if os.Getenv("MYRIARCH_WAVE_LOG") != "" {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: prefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now,
		PlannerEvery: time.Hour, Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Stop()
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		tb.Fatal(err)
	}
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: wave", 1))
	files["policies/wave.yaml"] = []byte(wavePolicy)
	if err := s.apply(ctx, c, files, "wave-1"); err != nil {
		tb.Fatal(err)
	}
	first := revision.Hash(files["configs/edge.yaml"])

	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.Heartbeat = n, s.GatewayURL, s.AgentToken, 10, 30*time.Second
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = fleet.Stop() }()
	settle := func(hash string) {
		on := func(a simfleet.AgentState) bool {
			return a.ConfigHash == hash && a.ConfigStatus == "APPLIED" && a.Healthy && !a.Busy
		}
		if err := fleet.Wait(ctx, allOn(on)); err != nil {
			tb.Fatalf("the agents never settled on configuration %s: %v\n%s", hash, err, unsettled(s, fleet, on))
		}
		// The stack too: the agents' first connections and reports
		// (assigned, planned, evaluated) must be through the stream before
		// the wave, or the wave's reports queue behind that backlog (it was
		// 15 s deep).
		if err := s.agentEventsQuiet(ctx, 2*time.Second); err != nil {
			tb.Fatalf("the agent stream never went quiet: %v", err)
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
			tb.Fatal(err)
		}
		if _, err := s.watch(ctx, c, id, func(string, ...any) {}, "completed"); err != nil {
			tb.Fatal(err)
		}
		settle(hash)
	}

	var runs []waveRun
	for i := 0; i < maxWaves; i++ {
		if i > 0 {
			settle(revision.Hash(files["configs/edge.yaml"]))
		}
		w := measureWave(ctx, tb, s, c, fleet, n, prefix, files, change, fmt.Sprintf("wave-%d", i+2))
		runs = append(runs, w)
		if accept(w) {
			break
		}
	}
	return runs
}

// measureWave rolls out one change of fleet edge's configuration and
// measures it.
func measureWave(ctx context.Context, tb testing.TB, s *Stack, c client, fleet *simfleet.Fleet, n int, prefix string,
	files map[string][]byte, change func(string) string, commit string) waveRun {
	// The change: a new configuration of fleet edge, one rollout, one wave.
	next := change("wave")
	obs := observe(fleet, next)
	if b, ok := tb.(*testing.B); ok {
		b.ResetTimer()
	}
	s.Deps.Store.ResetUsage()
	s.StreamUsage.Reset()
	counting := time.Now()
	id, err := s.applyForRollout(ctx, c, files, commit)
	if err != nil {
		tb.Fatal(err)
	}
	// What the apply asked (the revision stored, the planner's reads of the
	// fleet, the rollout and its targets created) is the rollout's creation,
	// counted apart from the wave's decisions.
	created := s.usage()
	stored := pollVerifying(ctx, tb, prefix, id)
	seen := stored()
	// Waited for on a store of its own, as the sample is: a watch through
	// the API reads the rollout's every target and agent each time it looks,
	// which would count as the stack's.
	if err := waitStatus(ctx, tb, prefix, id, rollout.Completed); err != nil {
		tb.Fatal(err)
	}
	completed := time.Now()
	w := waveRun{n: n, created: created, usage: subKinds(s.usage(), created), counted: completed.Sub(counting)}
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
	}
	_, ts, err := s.Deps.Store.LoadRollout(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	got, applied := obs.times()
	var firstStart, lastGot time.Time
	for _, t := range ts {
		if t.Status != rollout.TargetSucceeded || t.StartedAt == nil || t.VerifiedAt == nil {
			tb.Fatalf("target %s is %s (%s)", t.AgentID, t.Status, t.Reason)
		}
		if firstStart.IsZero() || t.StartedAt.Before(firstStart) {
			firstStart = *t.StartedAt
		}
		g, ok1 := got[t.AgentID]
		a, ok2 := applied[t.AgentID]
		if !ok1 || !ok2 {
			tb.Fatalf("target %s: received %v, applied %v", t.AgentID, ok1, ok2)
		}
		if g.After(lastGot) {
			lastGot = g
		}
		w.push = append(w.push, g.Sub(*t.StartedAt))
		w.decided = append(w.decided, t.VerifiedAt.Sub(a))
		if t.ReportedAt != nil { // the gateway's receive time of the APPLIED report
			w.received = append(w.received, t.ReportedAt.Sub(a))
			w.engineSide = append(w.engineSide, t.VerifiedAt.Sub(*t.ReportedAt))
		}
		if v, ok := seen[t.AgentID]; ok {
			w.stored = append(w.stored, v.Sub(a))
		}
	}
	if len(w.stored) == 0 {
		tb.Fatal("no sampled target was seen stored verifying")
	}
	w.allReceived, w.completed = lastGot.Sub(firstStart), completed.Sub(firstStart)
	return w
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

// usage is what the stack's store and stream pollers asked so far.
func (s *Stack) usage() usage.Kinds {
	return s.Deps.Store.UsageByKind().Merge(s.StreamUsage.Kinds())
}

// subKinds is a less b, kind by kind.
func subKinds(a, b usage.Kinds) usage.Kinds {
	out := usage.Kinds{}
	for k, c := range a {
		if d := c.Sub(b[k]); d != (usage.Counts{}) {
			out[k] = d
		}
	}
	return out
}

// waitStatus reads the rollout item every 100 ms until its status is want.
func waitStatus(ctx context.Context, tb testing.TB, prefix, id string, want rollout.Status) error {
	st := store.New(storetest.Client(tb), store.TablesWithPrefix(prefix))
	for {
		r, err := st.GetRollout(ctx, id)
		if err == nil && r.Status == want {
			return nil
		}
		if err == nil && r.Status.Final() {
			return fmt.Errorf("rollout %s is %s (%s), want %s", id, r.Status, r.StatusReason, want)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("rollout %s never became %s: %w", id, want, err)
		}
	}
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
func pollVerifying(ctx context.Context, tb testing.TB, prefix, id string) func() map[string]time.Time {
	seen := map[string]time.Time{}
	// A store of its own, so that the stack's counts hold only the stack.
	sample := store.New(storetest.Client(tb), store.TablesWithPrefix(prefix))
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			p, err := sample.TargetsPage(ctx, id, 0, "", storedSample)
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

// unsettled describes the agents that are not yet as on wants them, as
// they see themselves and as the store has them (ten at most): what a
// wave that never settles is waiting for.
func unsettled(s *Stack, fleet *simfleet.Fleet, on func(simfleet.AgentState) bool) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	n := 0
	for _, a := range fleet.Snapshot() {
		if on(a) {
			continue
		}
		if n++; n > 10 {
			continue
		}
		fmt.Fprintf(&b, "  agent %d %s: connected %t, config %.12s %s, healthy %t, busy %t", a.Number, a.InstanceUID,
			a.Connected, a.ConfigHash, a.ConfigStatus, a.Healthy, a.Busy)
		if st, err := s.Deps.Store.GetAgentRecord(ctx, a.InstanceUID); err != nil || st == nil {
			fmt.Fprintf(&b, "; stored: none, %v\n", err)
		} else {
			fmt.Fprintf(&b, "; stored: fleet %q (assignment pending %t), desired %.12s, pushed %.12s, reported %.12s %s, online %t, lagging %t\n",
				st.Fleet, st.AssignPending, st.DesiredHash, st.Push.AckedHash, st.RemoteConfig.Hash, st.RemoteConfig.Status, st.Online, st.Lagging())
		}
	}
	fmt.Fprintf(&b, "%d agents unsettled", n)
	return b.String()
}
