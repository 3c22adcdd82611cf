package updater

import "testing"

func TestAfter(t *testing.T) {
	tests := []struct {
		step   Step
		failed bool
		next   Step
		end    string
	}{
		{step: StepOffered, next: StepDownloading},
		{step: StepOffered, failed: true, end: Failed},
		{step: StepDownloading, next: StepVerifying},
		{step: StepDownloading, failed: true, end: Failed},
		{step: StepVerifying, next: StepInstalling},
		{step: StepVerifying, failed: true, end: Failed},
		{step: StepInstalling, next: StepRestarting},
		{step: StepInstalling, failed: true, end: Failed}, // installing switches last: nothing to undo
		{step: StepRestarting, next: StepHealthCheck},
		{step: StepRestarting, failed: true, next: StepRollingBack}, // after the switch
		{step: StepHealthCheck, end: Succeeded},
		{step: StepHealthCheck, failed: true, next: StepRollingBack},
		{step: StepRollingBack, end: RolledBack},
		{step: StepRollingBack, failed: true, end: Failed},
		{step: "unknown", failed: true, end: Failed}, // a journal from elsewhere
	}
	for _, tt := range tests {
		next, end := after(tt.step, tt.failed)
		if next != tt.next || end != tt.end {
			t.Errorf("after(%s, failed=%v) = %q, %q; want %q, %q", tt.step, tt.failed, next, end, tt.next, tt.end)
		}
	}
}

func TestResumeAt(t *testing.T) {
	tests := []struct {
		step     Step
		switched bool
		at       Step
		clean    bool
	}{
		{step: StepOffered, at: StepOffered, clean: true}, // its checks may not have run
		{step: StepDownloading, at: StepDownloading, clean: true},
		{step: StepVerifying, at: StepDownloading, clean: true}, // the download is not trusted twice
		{step: StepInstalling, at: StepDownloading, clean: true},
		{step: StepInstalling, switched: true, at: StepInstalling},
		{step: StepRestarting, switched: true, at: StepRestarting},
		{step: StepHealthCheck, switched: true, at: StepHealthCheck},
		{step: StepRollingBack, switched: true, at: StepRollingBack},
		{step: StepRollingBack, at: StepRollingBack}, // switched back already
	}
	for _, tt := range tests {
		at, clean := resumeAt(tt.step, tt.switched)
		if at != tt.at || clean != tt.clean {
			t.Errorf("resumeAt(%s, switched=%v) = %s, %v; want %s, %v", tt.step, tt.switched, at, clean, tt.at, tt.clean)
		}
	}
}

// forget drops the steps to be begun again, never the failure that sent
// the attempt into its rollback.
func TestAttempt_Forget(t *testing.T) {
	a := newAttempt(Offer{Version: "0.150.0"}, "0.149.0", t0)
	for _, s := range forward {
		a.begin(s, t0)
		a.finish(s, t0, nil)
	}
	a.begin(StepRollingBack, t0)
	a.forget(StepRollingBack)
	if len(a.Steps) != len(forward) {
		t.Errorf("steps %v after forgetting the rollback", stepStatuses(a))
	}
	a.forget(StepVerifying)
	want := map[Step]string{StepOffered: StepDone, StepDownloading: StepDone}
	if got := stepStatuses(a); len(got) != len(want) || got[StepOffered] != StepDone || got[StepDownloading] != StepDone {
		t.Errorf("steps %v, want %v", got, want)
	}
}
