package enginetask

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// watcher is an executor that watches its updates: it fails the agents in
// failed, cannot answer for those in broken, and records how many questions
// were in flight at once.
type watcher struct {
	executor.ManualExecutor
	failed, broken map[string]bool

	mu             sync.Mutex
	asked          []string
	inFlight, most int
}

func (w *watcher) Failed(_ context.Context, c executor.Call) (string, bool, error) {
	w.mu.Lock()
	w.asked = append(w.asked, c.Target.AgentID)
	w.inFlight++
	w.most = max(w.most, w.inFlight)
	w.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // let the questions overlap
	w.mu.Lock()
	w.inFlight--
	w.mu.Unlock()
	switch {
	case w.broken[c.Target.AgentID]:
		return "", false, errors.New("AWX unavailable")
	case w.failed[c.Target.AgentID]:
		return "job of " + c.Target.AgentID + " failed", true, nil
	}
	return "", false, nil
}

func watchInput(n int) engine.Input {
	in := engine.Input{Rollout: rollout.Rollout{ID: "r1", Kind: policy.KindVersion, Status: rollout.Running, Executor: "watching"}}
	for i := range n {
		in.Targets = append(in.Targets, rollout.Target{AgentID: fmt.Sprintf("a%02d", i), Status: rollout.TargetInProgress, ExternalRef: fmt.Sprintf("job-%d", i), ToRef: "0.161.0"})
	}
	return in
}

func TestAskExecutor_BoundedAndOnlyUpdatesInProgress(t *testing.T) {
	w := &watcher{failed: map[string]bool{"a03": true, "a07": true}, broken: map[string]bool{"a05": true}}
	p := Evaluator{Executors: executor.Registry{"watching": w}, Log: slog.New(slog.DiscardHandler)}
	in := watchInput(30)
	in.Targets[0].Status = rollout.TargetVerifying                 // the collector reported the version
	in.Targets[1].ExternalRef = ""                                 // nothing was started
	in.Targets[2].RollbackAt = &time.Time{}                        // a reset of a rollback
	in.Targets[7].ExternalRef, in.Targets[7].Attempt = "job-7b", 2 // the question names the current job
	got := p.askExecutor(context.Background(), in)
	want := map[string]engine.ExecutorFailure{
		"a03": {ExternalRef: "job-3", Reason: "job of a03 failed"},
		"a07": {ExternalRef: "job-7b", Reason: "job of a07 failed"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("failures %v, want %v (a05's error changes nothing)", got, want)
	}
	if len(w.asked) != 27 || w.most > watchConcurrency || w.most < 2 {
		t.Fatalf("asked %d, at most %d at once; want 27 asked, concurrently but at most %d", len(w.asked), w.most, watchConcurrency)
	}
}

func TestAskExecutor_NotAsked(t *testing.T) {
	w := &watcher{failed: map[string]bool{"a00": true}}
	reg := executor.Registry{"watching": w, executor.Manual: executor.ManualExecutor{}}
	p := Evaluator{Executors: reg, Log: slog.New(slog.DiscardHandler)}
	for _, c := range []struct {
		name string
		edit func(*engine.Input)
	}{
		{name: "an executor that does not watch", edit: func(in *engine.Input) { in.Rollout.Executor = executor.Manual }},
		{name: "an unknown executor", edit: func(in *engine.Input) { in.Rollout.Executor = "gone" }},
		{name: "a configuration rollout", edit: func(in *engine.Input) { in.Rollout.Kind = policy.KindConfig }},
		{name: "a rollback", edit: func(in *engine.Input) { in.Rollout.Status = rollout.RollingBack }},
		{name: "a final rollout", edit: func(in *engine.Input) { in.Rollout.Status = rollout.Aborted }},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := watchInput(1)
			c.edit(&in)
			if got := p.askExecutor(context.Background(), in); len(got) != 0 {
				t.Fatalf("failures %v, want none asked", got)
			}
		})
	}
	if len(w.asked) != 0 {
		t.Fatalf("asked %v, want nobody", w.asked)
	}
}
