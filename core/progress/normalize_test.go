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
		{name: "nil stays nil", p: nil, status: "cancelled", want: "<nil>", same: true},
		{name: "open target: as is", p: downloading(), status: "in_progress", want: "downloading updater offered:done downloading:running verifying:pending", same: true},
		{name: "final phase: as is", p: stored(PhaseFailed, StepDone, StepFailed, StepPending), status: "failed", want: "failed updater offered:done downloading:failed verifying:pending", same: true},
		{name: "following a failed target: as is", p: stored(PhaseFailed, StepDone, StepRunning), status: "failed", want: "failed updater offered:done downloading:running", same: true},
		{name: "mass abort: cancelled, running skipped", p: downloading(), status: "cancelled", want: "cancelled updater offered:done downloading:skipped verifying:pending", same: false},
		{name: "failed: running failed", p: downloading(), status: "failed", want: "failed updater offered:done downloading:failed verifying:pending", same: false},
		{name: "rolled_back: running failed", p: downloading(), status: "rolled_back", want: "rolled_back updater offered:done downloading:failed verifying:pending", same: false},
		{name: "skipped: like cancelled", p: downloading(), status: "skipped", want: "cancelled updater offered:done downloading:skipped verifying:pending", same: false},
		{name: "succeeded: running done", p: stored(PhaseHealthWait, StepDone, StepDone, StepDone, StepDone, StepDone, StepDone, StepRunning), status: "succeeded", want: "succeeded updater offered:done downloading:done verifying:done installing:done restarting:done health_check:done health_wait:done", same: false},
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
