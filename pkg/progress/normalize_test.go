package progress

import "testing"

func TestNormalize(t *testing.T) {
	names := []Phase{PhaseOffered, PhaseDownloading, PhaseVerifying, PhaseInstalling, PhaseRestarting, PhaseHealthCheck, PhaseHealthWait}
	// stored is a progress whose steps, in order, have the statuses.
	stored := func(phase Phase, statuses ...StepStatus) *TargetProgress {
		p := &TargetProgress{Phase: phase, Source: SourceUpdater, Attempt: 1, ToVersion: "0.162.0"}
		for i, s := range statuses {
			p.Steps = append(p.Steps, Step{Name: names[i], Status: s})
		}
		return p
	}
	downloading := func() *TargetProgress { return stored(PhaseDownloading, StepDone, StepRunning, StepPending) }
	tests := []struct {
		name   string
		p      *TargetProgress
		status string
		want   string
		same   bool // returned as is
	}{
		{"nil stays nil", nil, "cancelled", "<nil>", true},
		{"open target: as is", downloading(), "in_progress", "downloading updater offered:done downloading:running verifying:pending", true},
		{"final phase: as is", stored(PhaseFailed, StepDone, StepFailed, StepPending), "failed", "failed updater offered:done downloading:failed verifying:pending", true},
		{"following a failed target: as is", stored(PhaseFailed, StepDone, StepRunning), "failed", "failed updater offered:done downloading:running", true},
		{"mass abort: cancelled, running skipped", downloading(), "cancelled", "cancelled updater offered:done downloading:skipped verifying:pending", false},
		{"failed: running failed", downloading(), "failed", "failed updater offered:done downloading:failed verifying:pending", false},
		{"rolled_back: running failed", downloading(), "rolled_back", "rolled_back updater offered:done downloading:failed verifying:pending", false},
		{"skipped: like cancelled", downloading(), "skipped", "cancelled updater offered:done downloading:skipped verifying:pending", false},
		{"succeeded: running done", stored(PhaseHealthWait, StepDone, StepDone, StepDone, StepDone, StepDone, StepDone, StepRunning), "succeeded", "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before string
			if tt.p != nil {
				before = shape(tt.p)
			}
			got := Normalize(tt.p, tt.status)
			if shape(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", shape(got), tt.want)
			}
			if (got == tt.p) != tt.same {
				t.Errorf("returned the stored value itself: %v, want %v", got == tt.p, tt.same)
			}
			if tt.p != nil && shape(tt.p) != before {
				t.Errorf("the stored value was changed: %s", shape(tt.p))
			}
		})
	}
}
