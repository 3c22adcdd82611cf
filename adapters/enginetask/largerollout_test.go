package enginetask_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// A large rollout's evaluation as the engine Lambda runs it (the state
// machine's evaluate task), on the DynamoDB store: what it reads, writes,
// allocates and holds. BenchmarkEvaluate_100kTargets measures it at 10,000
// and 100,000 targets; TestEvaluate_LargeRollout_Counts bounds its counts at a
// size the suite affords.

// largeRollout is a configuration rollout of n agents in two waves, "first"
// (start of the agents) and "rest", with maxConcurrent start, as it stands
// right before the evaluation that begins its rest wave: every target of the
// first wave succeeded, and that evaluation completes the first wave, begins
// the rest and starts start of its targets. Of the evaluations that read
// every target and agent, this one needs the most of them and writes the
// most: the engine judges every pending target of the running wave against
// its agent (holdBack: still in the fleet, window, online), and it stores
// each target it starts and, for a configuration, each agent's desired hash.
// The engine itself brings the rollout there, in memory, from engine.Create,
// with agents that apply what they are asked and report it, so that the
// targets, the rollout and the agents carry what a real rollout leaves on
// them.
type largeRollout struct {
	r      rollout.Rollout
	ts     []rollout.Target
	agents map[string]agent.Agent
	now    time.Time // the moment of the evaluation that begins the rest wave
}

// newLargeRollout builds the rollout. n must be a multiple of start with
// start*100/n a whole percent, and at least twice start.
func newLargeRollout(tb testing.TB, n, start int) largeRollout {
	tb.Helper()
	if n%start != 0 || start*100%n != 0 || n < 2*start {
		tb.Fatalf("a first wave of %d of %d agents is no whole percent of them", start, n)
	}
	agents := make(map[string]agent.Agent, n)
	cands := make([]engine.Candidate, n)
	for i := range cands {
		a := fleetAgent(i)
		agents[a.ID] = a
		cands[i] = engine.Candidate{AgentID: a.ID, FromRef: a.RemoteConfig.Hash, Attributes: mapAttrs(a.Attributes)}
	}
	spec := policy.Spec{Waves: []policy.Wave{{Name: "first", Percent: start * 100 / n}, {Name: "rest", Percent: 100}},
		MaxConcurrent: &start, HealthWait: time.Minute}
	snap := policy.Policy{Name: "large", Path: "policies/large.yaml", Commit: "c1", Spec: spec}.Snapshot(policy.KindConfig)
	r, ts, err := engine.Create(engine.NewRollout{ID: fmt.Sprintf("r-large-%d", n), Fleet: "edge", Kind: policy.KindConfig,
		Policy: snap, ToRef: "h-new", Origin: rollout.OriginGitOps, Candidates: cands, Now: t0})
	if err != nil {
		tb.Fatal(err)
	}
	l := largeRollout{r: r, ts: ts, agents: agents, now: t0}
	l.evaluate(tb, start)               // the first wave starts; its agents apply and report 10 s later
	l.now = l.now.Add(20 * time.Second) // the report's agent-event evaluation verifies them
	l.evaluate(tb, 0)
	l.now = l.now.Add(70 * time.Second) // past the health wait, an agent-event evaluation succeeds them
	first := slices.DeleteFunc(slices.Clone(l.ts), func(t rollout.Target) bool { return t.Wave != 0 })
	res, ok := engine.EvaluateTargets(engine.Input{Rollout: l.r, Targets: first, Agents: l.agents, Now: l.now})
	if !ok || len(res.Changed) != start {
		tb.Fatalf("the first wave's targets: %d of %d succeed (ok %v)", len(res.Changed), start, ok)
	}
	l.ts = rollout.Overlay(l.ts, res.Changed)
	return l
}

// evaluate runs a whole evaluation at l.now and keeps its result; it must
// start want targets, whose agents apply the configuration and report it,
// healthy, 10 s later.
func (l *largeRollout) evaluate(tb testing.TB, want int) {
	tb.Helper()
	res := engine.Evaluate(engine.Input{Rollout: l.r, Targets: l.ts, Agents: l.agents, Now: l.now})
	l.r, l.ts = res.Rollout, rollout.Overlay(l.ts, res.Changed)
	if res.Started != want {
		tb.Fatalf("an evaluation of rollout %s started %d targets, want %d", l.r.ID, res.Started, want)
	}
	reported := l.now.Add(10 * time.Second)
	for _, o := range res.Orders {
		a := l.agents[o.AgentID]
		a.DesiredHash, a.LastSeen, a.EffectiveHash = o.Ref, reported, "eff-"+o.Ref
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: o.Ref, Status: agent.ConfigApplied, Since: reported}
		a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: reported.Add(-5 * time.Second), ReportedAt: reported,
			Components: &agent.ComponentSummary{Total: 9}}
		l.agents[o.AgentID] = a
	}
}

// fleetAgent is agent i of the fleet as a collector reports itself through
// OpAMP: its identity and host attributes, a healthy component tree,
// configuration h-old applied, its collector package, and the desired hash
// the fleet's last rollout left.
func fleetAgent(i int) agent.Agent {
	id := fmt.Sprintf("edge-%06d", i)
	since := t0.Add(-72 * time.Hour)
	zone := []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}[i%3]
	return agent.Agent{ID: id, Fleet: "edge", Online: true, LastSeen: t0.Add(-time.Duration(i%30) * time.Second),
		ConnectedAt: since, Capabilities: 0xFFF,
		Attributes: map[string]string{
			"service.name": "otelcol-contrib", "service.version": "0.160.0", "service.instance.id": id,
			"host.name": fmt.Sprintf("host-%06d.edge.example.internal", i), "host.arch": "amd64", "os.type": "linux",
			"os.description": "Debian GNU/Linux 12 (bookworm)", "cloud.region": "eu-west-1", "cloud.availability_zone": zone,
			"labels.team": "observability", "labels.env": "prod", "site.timezone": "Europe/Dublin",
		},
		Health: agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: since, ReportedAt: since,
			Components: &agent.ComponentSummary{Total: 9}},
		RemoteConfig:   agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: since},
		EffectiveHash:  "eff-h-old",
		ServiceVersion: "0.160.0", VersionSince: since,
		Package:     agent.PackageStatus{Version: "0.160.0", Status: agent.PackageInstalled, Since: since},
		DesiredHash: "h-old",
	}
}

// seed stores the agents and the rollout with its targets through the
// store, in batch writes.
func (l largeRollout) seed(tb testing.TB, ctx context.Context, st *store.Store) {
	tb.Helper()
	as := make([]agent.Agent, 0, len(l.agents))
	for _, t := range l.ts {
		as = append(as, l.agents[t.AgentID])
	}
	if err := st.ImportAgents(ctx, as); err != nil {
		tb.Fatalf("seed agents: %v", err)
	}
	if err := st.CreateRollout(ctx, l.r, l.ts); err != nil {
		tb.Fatalf("seed rollout: %v", err)
	}
}

// engineHandler is the engine Lambda's handler over st for the evaluate
// task at now: logs and metrics encoded as in Lambda, written nowhere.
func engineHandler(st *store.Store, now time.Time) enginetask.Handler {
	discard := slog.New(slog.NewJSONHandler(io.Discard, nil))
	return enginetask.Handler{Evaluator: enginetask.Evaluator{Store: st, Clock: func() time.Time { return now },
		Executors: executor.Registry{executor.Manual: executor.ManualExecutor{}}, Log: discard, Metrics: io.Discard}}
}

// evaluationFigures is what one evaluation cost this process and DynamoDB.
type evaluationFigures struct {
	wall time.Duration
	// peakHeap is the most heap that held objects (runtime/metrics
	// /memory/classes/heap/objects:bytes: live ones and those the GC has not
	// swept yet), sampled every 5 ms during the evaluation and once after.
	peakHeap uint64
	// allocBytes and allocs are the heap allocations of the process during
	// the evaluation (runtime.MemStats TotalAlloc and Mallocs).
	allocBytes, allocs uint64
	usage              store.Usage
	// peakRSS is the most resident memory of the process during the
	// evaluation (Linux's VmHWM, started over before it); 0 elsewhere.
	peakRSS uint64
}

// measureEvaluation runs the evaluate task of rollout id once, at now.
func measureEvaluation(tb testing.TB, ctx context.Context, st *store.Store, id string, now time.Time) evaluationFigures {
	tb.Helper()
	h := engineHandler(st, now)
	debug.FreeOSMemory() // the seeding's garbage collected and its pages returned: the Lambda holds none of it
	rss := resetPeakRSS()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st.ResetUsage()
	stopProfiles := startProfiles(tb)
	peak := sampleHeap(5 * time.Millisecond)
	begin := time.Now()
	out, err := h.Handle(ctx, enginetask.Input{Task: enginetask.TaskEvaluate, RolloutID: id, Iteration: 1})
	wall := time.Since(begin)
	maxHeap := peak.stop()
	stopProfiles()
	runtime.ReadMemStats(&after)
	if err != nil {
		tb.Fatalf("evaluate rollout %s: %v", id, err)
	}
	if out.Status != string(rollout.Running) {
		tb.Fatalf("rollout %s is %s after its evaluation, want running (verdict %s)", id, out.Status, out.Verdict)
	}
	f := evaluationFigures{wall: wall, peakHeap: maxHeap, usage: st.Usage(),
		allocBytes: after.TotalAlloc - before.TotalAlloc, allocs: after.Mallocs - before.Mallocs}
	if rss {
		f.peakRSS = peakRSS()
	}
	return f
}

// resetPeakRSS has Linux start the peak resident set size of this process
// (VmHWM) over from its current size; false where it cannot.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is VmHWM of /proc/self/status in bytes; 0 when it cannot be read.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// wantStarted fails unless exactly want targets of rollout id are stored
// in progress.
func wantStarted(tb testing.TB, ctx context.Context, st *store.Store, id string, want int) {
	tb.Helper()
	_, ts, err := st.LoadRollout(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, t := range ts {
		if t.Status == rollout.TargetInProgress {
			n++
		}
	}
	if n != want {
		tb.Fatalf("%d targets of rollout %s in progress after its evaluation, want %d", n, id, want)
	}
}

// startProfiles, when MYRIARCH_EVALUATE_PROFILE names a directory, writes
// a CPU profile of the evaluation (cpu.prof) and the allocation profiles
// before and after it (allocs-before.prof, allocs-after.prof: `go tool
// pprof -sample_index=alloc_space -diff_base allocs-before.prof
// allocs-after.prof` shows the evaluation's own).
func startProfiles(tb testing.TB) (stop func()) {
	dir := os.Getenv("MYRIARCH_EVALUATE_PROFILE")
	if dir == "" {
		return func() {}
	}
	write := func(name string, w func(*os.File) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err == nil {
			err = errors.Join(w(f), f.Close())
		}
		if err != nil {
			tb.Fatalf("profile %s: %v", name, err)
		}
	}
	allocs := func(f *os.File) error { return pprof.Lookup("allocs").WriteTo(f, 0) }
	write("allocs-before.prof", allocs)
	cpu, err := os.Create(filepath.Join(dir, "cpu.prof"))
	if err == nil {
		err = pprof.StartCPUProfile(cpu)
	}
	if err != nil {
		tb.Fatalf("cpu profile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := cpu.Close(); err != nil {
			tb.Fatalf("cpu profile: %v", err)
		}
		write("allocs-after.prof", allocs)
	}
}

// heapSampler records the peak of the heap's objects until stopped.
type heapSampler struct {
	done chan struct{}
	peak chan uint64
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func sampleHeap(every time.Duration) heapSampler {
	s := heapSampler{done: make(chan struct{}), peak: make(chan uint64, 1)}
	go func() {
		sample := []metrics.Sample{{Name: heapObjects}}
		var peak uint64
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-s.done:
				s.peak <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peak, the heap of this moment
// included.
func (s heapSampler) stop() uint64 {
	close(s.done)
	return <-s.peak
}
