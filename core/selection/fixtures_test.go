package selection

import (
	"time"

	"github.com/myriarch/myriarch/core/fleet"
)

var (
	t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) // when the choice was made
	t1 = t0.Add(time.Hour)                            // now
)

// edge is a fleet with Git target 0.161.0, the updater and an enabled range
// frame; mutators adjust it per row.
func edge(mut ...func(*fleet.Fleet)) *fleet.Fleet {
	f := &fleet.Fleet{
		Name:      "edge",
		Collector: fleet.Collector{Version: "0.161.0"},
		Update: fleet.Update{Executor: fleet.ExecutorUpdater, Selection: fleet.Frame{
			Enabled: true, VersionRange: ">=0.161.0, <=0.163.0",
		}},
	}
	for _, m := range mut {
		m(f)
	}
	return f
}

func gitTarget(v string) func(*fleet.Fleet) { return func(f *fleet.Fleet) { f.Collector.Version = v } }
func rangeFrame(r string) func(*fleet.Fleet) {
	return func(f *fleet.Fleet) { f.Update.Selection.VersionRange, f.Update.Selection.Versions = r, nil }
}
func listFrame(vs ...string) func(*fleet.Fleet) {
	return func(f *fleet.Fleet) { f.Update.Selection.VersionRange, f.Update.Selection.Versions = "", vs }
}
func disabled(f *fleet.Fleet)       { f.Update.Selection.Enabled = false }
func noBlock(f *fleet.Fleet)        { f.Update.Selection = fleet.Frame{} }
func executorNone(f *fleet.Fleet)   { f.Update.Executor = fleet.ExecutorNone }
func allowDowngrade(f *fleet.Fleet) { f.Update.Selection.AllowDowngrade = true }
func requireReason(f *fleet.Fleet)  { f.Update.Selection.RequireReason = true }

// chosen is an active selection of version made while Git said 0.161.0.
func chosen(version string, mut ...func(*Selection)) *Selection {
	s := &Selection{
		Fleet: "edge", Version: version, State: Active, GitVersion: "0.161.0", GitCommit: "c1",
		SelectedBy: "user:alice", SelectedAt: t0, Reason: "fix", UpdatedAt: t0, Revision: 3,
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func held(s *Selection) { s.State, s.StateReason = Invalidated, "outside" }

func str(s string) *string { return &s }
