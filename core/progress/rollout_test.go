package progress_test

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

// TargetFacts.Status takes the statuses as core/rollout spells them; an
// external test, so that core/rollout may import core/progress.
func TestDerive_RolloutTargetStatuses(t *testing.T) {
	start := time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		status rollout.TargetStatus
		want   progress.Phase // "" = no progress
	}{
		{status: rollout.TargetPending, want: ""},
		{status: rollout.TargetWaitingWindow, want: ""},
		{status: rollout.TargetInProgress, want: progress.PhaseInstalling},
		{status: rollout.TargetVerifying, want: progress.PhaseHealthWait},
		{status: rollout.TargetSucceeded, want: progress.PhaseSucceeded},
		{status: rollout.TargetFailed, want: progress.PhaseFailed},
		{status: rollout.TargetSkipped, want: progress.PhaseCancelled},
		{status: rollout.TargetCancelled, want: progress.PhaseCancelled},
		{status: rollout.TargetRolledBack, want: progress.PhaseRolledBack},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			f := progress.TargetFacts{Status: string(tt.status), Attempt: 1, ToVersion: "0.162.0",
				StartedAt: &start, VerifiedAt: &start, Executor: progress.ExecutorManual}
			p := progress.Derive(nil, f, agent.Agent{}, start)
			var got progress.Phase
			if p != nil {
				got = p.Phase
			}
			if got != tt.want {
				t.Errorf("phase %q, want %q", got, tt.want)
			}
		})
	}
}
