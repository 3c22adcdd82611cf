// Package watchdog keeps every active rollout driven by a running
// execution. A rollout whose execution is missing (the local Step Functions
// endpoint restarted with the stack; an execution's history expired) or
// ended while the rollout is still active (an execution that failed after
// its retries, a start that was lost) would otherwise wait for ever: the
// watchdog starts a new execution for it, which picks the rollout up where
// its stored state says it is. It also measures the longest approval wait,
// so that an alarm can page before an approval expires unnoticed.
package watchdog

import (
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

// DefaultGrace is how long an ended execution may stand before the watchdog
// acts: a long rollout continues as a new execution, and for a moment the
// old one has ended while the new one has not yet recorded itself.
const DefaultGrace = 2 * time.Minute

// EnvStage names the deployment stage, the dimension of the metrics.
const EnvStage = "MYRIARCH_STAGE"

// ExecutionState is what Step Functions says of a rollout's execution.
type ExecutionState struct {
	Missing bool      // no such execution (or none was ever recorded)
	Running bool      // status RUNNING
	Status  string    // the status as Step Functions names it
	Stopped time.Time // when it ended (zero while running)
}

// Verdict says whether to start a new execution, and why.
type Verdict struct {
	Resume bool
	Why    string
}

// Decide judges one rollout. A final rollout and a running execution need
// nothing. A missing execution is resumed at once when one was recorded
// (it existed, so it was lost), and after grace from the rollout's creation
// when none was: the planner starts the first execution right after it
// creates the rollout. An ended execution is resumed after grace from its
// end.
func Decide(r rollout.Rollout, ex ExecutionState, now time.Time, grace time.Duration) Verdict {
	switch {
	case r.Status.Final() || ex.Running:
		return Verdict{}
	case ex.Missing && r.ExecutionArn != "":
		return Verdict{Resume: true, Why: "its execution " + r.ExecutionArn + " does not exist"}
	case ex.Missing:
		if now.Sub(r.CreatedAt) < grace {
			return Verdict{}
		}
		return Verdict{Resume: true, Why: "no execution started within " + grace.String() + " of its creation"}
	case now.Sub(ex.Stopped) < grace:
		return Verdict{}
	}
	return Verdict{Resume: true, Why: "its execution ended (" + ex.Status + ") while the rollout is " + string(r.Status)}
}

// ApprovalWait is how long the rollout's longest-waiting wave has waited
// for approval at now; zero unless the rollout waits for one.
func ApprovalWait(r rollout.Rollout, now time.Time) time.Duration {
	if r.Status != rollout.WaitingApproval {
		return 0
	}
	var longest time.Duration
	for _, w := range r.Waves {
		if w.WaitingSince != nil && !w.Approved && now.Sub(*w.WaitingSince) > longest {
			longest = now.Sub(*w.WaitingSince)
		}
	}
	return longest
}
