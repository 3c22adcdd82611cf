package updater

import "slices"

// forward is the order of the steps of an attempt that goes well.
var forward = []Step{StepOffered, StepDownloading, StepVerifying, StepInstalling, StepRestarting, StepHealthCheck}

func index(s Step) int { return slices.Index(forward, s) }

// after is what follows step s: the next step, or how the attempt ends.
// Before the switch of current (up to installing, which switches last) a
// failure ends the attempt failed and the host is as it was; after it the
// new version is in place, so a failure rolls back.
//
//	step          ok             failed
//	offered       downloading    failed
//	downloading   verifying      failed
//	verifying     installing     failed
//	installing    restarting     failed
//	restarting    health_check   rolling_back
//	health_check  succeeded      rolling_back
//	rolling_back  rolled_back    failed
func after(s Step, failed bool) (next Step, end string) {
	switch {
	case s == StepRollingBack && failed:
		return "", Failed
	case s == StepRollingBack:
		return "", RolledBack
	case failed && (s == StepRestarting || s == StepHealthCheck):
		return StepRollingBack, ""
	case failed:
		return "", Failed
	case s == StepHealthCheck:
		return "", Succeeded
	}
	return forward[index(s)+1], ""
}

// resumeAt is where an attempt that a crash left at step goes on, and
// whether what it left behind is removed first. Before the switch of
// current nothing of it is in use: the partial download and extraction go
// and the attempt starts over from downloading with the offer the journal
// kept (from offered, whose checks may not have run). After the switch it
// goes on: installing finishes its bookkeeping, restarting restarts, the
// health check checks, a rollback rolls back. switched says whether current
// points to the offered version.
//
//	step          switched  at            clean
//	offered       -         offered       yes
//	downloading   -         downloading   yes
//	verifying     -         downloading   yes
//	installing    no        downloading   yes
//	installing    yes       installing    no
//	restarting    -         restarting    no
//	health_check  -         health_check  no
//	rolling_back  -         rolling_back  no
func resumeAt(step Step, switched bool) (at Step, clean bool) {
	switch step {
	case StepOffered:
		return StepOffered, true
	case StepDownloading, StepVerifying:
		return StepDownloading, true
	case StepInstalling:
		if switched {
			return StepInstalling, false
		}
		return StepDownloading, true
	}
	return step, false
}
