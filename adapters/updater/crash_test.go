package updater

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// crashAt runs Handle until the point and stops it there as a crash would:
// the goroutine ends, nothing after the point runs, not even a report.
func crashAt(t *testing.T, e *env, point string, o Offer) {
	t.Helper()
	u := e.updater()
	crashed := false
	u.crash = func(p string) {
		if p == point {
			crashed = true
			runtime.Goexit()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.Handle(context.Background(), o)
	}()
	<-done
	if !crashed {
		t.Fatalf("the attempt never reached %s", point)
	}
}

// A crash at any point of an attempt is finished or undone at the next
// start: before the switch the leftovers go and the attempt starts over
// from the offer the journal kept; after it the attempt goes on. The host
// is never half-installed: current points to a complete version at every
// moment.
func TestResume_CrashAtEveryPoint(t *testing.T) {
	tests := []struct {
		point     string
		unhealthy bool   // the new version fails its health check
		current   string // right after the crash
		end       string
		want      string // current at the end
		restarts  int
	}{
		{point: "offered", current: "0.149.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "downloading", current: "0.149.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "verifying", current: "0.149.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "installing", current: "0.149.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "installing:extracted", current: "0.149.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "installing:switched", current: "0.150.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "restarting", current: "0.150.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "health_check", current: "0.150.0", end: Succeeded, want: "0.150.0", restarts: 1},
		{point: "health_check", unhealthy: true, current: "0.150.0", end: RolledBack, want: "0.149.0", restarts: 2},
		{point: "rolling_back", unhealthy: true, current: "0.150.0", end: RolledBack, want: "0.149.0", restarts: 2},
		{point: "rolling_back:switched", unhealthy: true, current: "0.149.0", end: RolledBack, want: "0.149.0", restarts: 2},
	}
	for _, tt := range tests {
		name := tt.point
		if tt.unhealthy {
			name += " unhealthy"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("0.148.0", "0.149.0")
			writeJournal(t, e, Journal{Previous: "0.148.0"})
			if tt.unhealthy {
				e.unhealthy["0.150.0"] = errors.New("503")
			}
			crashAt(t, e, tt.point, e.publish("0.150.0", release(t, "0.150.0")))

			j, err := loadJournal(filepath.Join(e.state, "update.json"))
			if err != nil {
				t.Fatal(err)
			}
			step, _, _ := strings.Cut(tt.point, ":")
			if j.Attempt == nil || j.Attempt.Status != step {
				t.Fatalf("journal %+v, want the attempt recorded at %s", j.Attempt, step)
			}
			assertWhole(t, e, tt.current)
			if index(Step(step)) >= 0 && index(Step(step)) <= index(StepInstalling) && tt.current == "0.149.0" {
				leaveDebris(t, e, "0.150.0") // what a crash inside the step leaves
			}

			e.updater().Resume(context.Background())

			a := e.last().Attempt
			if a.Status != tt.end || e.current() != tt.want {
				t.Fatalf("ended %s (%s) on %s, want %s on %s", a.Status, a.LastError, e.current(), tt.end, tt.want)
			}
			assertWhole(t, e, tt.want)
			for _, s := range forward {
				if st := a.Steps[s].Status; tt.end == Succeeded && st != StepDone {
					t.Errorf("step %s %q, want done", s, st)
				}
			}
			if e.restarts != tt.restarts {
				t.Errorf("%d restarts, want %d", e.restarts, tt.restarts)
			}
			if _, err := os.Stat(filepath.Join(e.state, "downloads")); !os.IsNotExist(err) {
				t.Errorf("downloads left behind: %v", err)
			}
			for _, v := range e.versions() {
				if strings.HasSuffix(v, partialSuffix) {
					t.Errorf("partial extraction %s left behind", v)
				}
			}
		})
	}
}

// assertWhole: current points to the version, whose binary is there whole.
func assertWhole(t *testing.T, e *env, version string) {
	t.Helper()
	if got := e.current(); got != version {
		t.Fatalf("current %s, want %s", got, version)
	}
	b, err := os.ReadFile(filepath.Join(e.layout.Root, "current", binaryName))
	if err != nil || !strings.Contains(string(b), version) {
		t.Fatalf("current binary %q, %v", b, err)
	}
}

// leaveDebris writes what a crash in the middle of downloading or
// extracting leaves: half a download and half a directory.
func leaveDebris(t *testing.T, e *env, version string) {
	t.Helper()
	dl := filepath.Join(e.state, "downloads")
	half := e.layout.dir(version) + partialSuffix
	for _, dir := range []string{dl, half} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dl, version+partialSuffix), []byte("\x1f\x8b half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, binaryName), []byte("#!/bin/sh\nec"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Without an unfinished attempt, Resume only reports what the journal
// holds; it does not run an ended attempt again.
func TestResume_NothingUnfinished(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	u := e.updater()
	u.Resume(context.Background())
	if r := e.last(); r.Attempt != nil || r.Package.HasVersion != "0.149.0" || r.Package.Status != PackageInstalled {
		t.Fatalf("first report %+v", r)
	}
	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))

	e.updater().Resume(context.Background())
	if r := e.last(); r.Attempt.Status != Succeeded || r.Package.HasVersion != "0.150.0" || e.restarts != 1 {
		t.Fatalf("report %+v after %d restarts", r, e.restarts)
	}
}

// A program stopped during a step (its context cancelled) leaves the
// journal for the next start instead of ending the attempt.
func TestHandle_Stopped_ResumesLater(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	ctx, cancel := context.WithCancel(context.Background())
	e.restartFn = func() error {
		cancel()
		return context.Canceled
	}
	e.updater().Handle(ctx, e.publish("0.150.0", release(t, "0.150.0")))
	if a := e.last().Attempt; a.Status != string(StepRestarting) {
		t.Fatalf("attempt %s, want still at restarting", a.Status)
	}
	e.restartFn = nil
	e.updater().Resume(context.Background())
	if a := e.last().Attempt; a.Status != Succeeded || e.current() != "0.150.0" {
		t.Fatalf("attempt %s, current %s", a.Status, e.current())
	}
}
