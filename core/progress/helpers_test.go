package progress

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// t0 is when the target started; the helpers count seconds from it.
var t0 = time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time  { return t0.Add(time.Duration(sec) * time.Second) }
func tp(sec int) *time.Time { t := at(sec); return &t }

// target is attempt 1 of a target from 0.161.0 to 0.162.0 by the updater,
// started at t0.
func target(status string) TargetFacts {
	return TargetFacts{Status: status, Attempt: 1, FromVersion: "0.161.0", ToVersion: "0.162.0",
		StartedAt: tp(0), Executor: ExecutorUpdater}
}

func verified(f TargetFacts, sec int) TargetFacts { f.VerifiedAt = tp(sec); return f }
func finished(f TargetFacts, sec int) TargetFacts { f.FinishedAt = tp(sec); return f }

// host is the updater's component for an attempt at version that began at
// began seconds; steps are given as name:status:start:end (end 0 = none).
func host(version, status string, began int, steps ...string) *agent.UpdateComponent {
	u := &agent.UpdateComponent{Status: status, Version: version, From: "v0.161.0", StartedAt: at(began),
		Steps: map[string]agent.UpdateStep{}}
	for _, s := range steps {
		parts := strings.Split(s, ":")
		name, st := parts[0], parts[1]
		start, _ := strconv.Atoi(parts[2])
		end, _ := strconv.Atoi(parts[3])
		e := agent.UpdateStep{Status: st, StartedAt: at(start)}
		if end != 0 {
			e.StatusTime = at(end)
		}
		if st == "failed" {
			e.LastError = name + " failed"
		}
		u.Steps["step:"+name] = e
	}
	return u
}

func withUpdate(u *agent.UpdateComponent) agent.Agent { return agent.Agent{ID: "a1", Update: u} }

func withPackage(version, status string, pct int, err string) agent.Agent {
	return agent.Agent{ID: "a1", Package: agent.PackageStatus{Version: version, Status: status, DownloadPercent: pct, Error: err}}
}

// shape is a one-line summary of a progress: "phase source name:status ...".
func shape(p *TargetProgress) string {
	if p == nil {
		return "<nil>"
	}
	parts := []string{string(p.Phase), string(p.Source)}
	for _, s := range p.Steps {
		parts = append(parts, string(s.Name)+":"+string(s.Status))
	}
	return strings.Join(parts, " ")
}

// tick is one derivation: the target and its agent as the engine sees them.
type tick struct {
	name string
	t    TargetFacts
	a    agent.Agent
	now  int
}

// frame is one tick in a golden file.
type frame struct {
	Tick     string          `json:"tick"`
	Progress *TargetProgress `json:"progress"`
}

// play derives the ticks in turn, each from the progress of the one before.
func play(ticks []tick) []frame {
	var prev *TargetProgress
	var frames []frame
	for _, tk := range ticks {
		prev = Derive(prev, tk.t, tk.a, at(tk.now))
		frames = append(frames, frame{tk.name, prev})
	}
	return frames
}

// golden compares v as indented JSON with testdata/name.json and checks that
// the file round-trips through the Go types unchanged.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
	var frames []frame
	if err := json.Unmarshal(want, &frames); err != nil {
		t.Fatalf("%s does not decode: %v", path, err)
	}
	again, _ := json.MarshalIndent(frames, "", "  ")
	if !bytes.Equal(append(again, '\n'), want) {
		t.Errorf("%s does not round-trip", path)
	}
}
