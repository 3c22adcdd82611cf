// Package execution owns the executions of the rollout state machine
// (statemachines/rollout.asl.json): starting the first execution of a
// rollout, continuing it as a new one, naming them, restarting a stranded
// rollout, and waking an execution parked on a task token.
//
// Contract:
//   - Starting is idempotent by name and input: Step Functions returns the
//     running execution for a second StartExecution with the same name and
//     input, so a retried start starts nothing new. Names are Name(id, n).
//   - Waking sends task success to a token, then clears the stored token
//     only while it is still the one woken, so a token that the execution
//     stored since (it parked again) survives. Any number of wakes of the
//     same rollout may run concurrently: at most one SendTaskSuccess per
//     token succeeds, and the others find the token Gone.
//   - Gone is the one rule for a token that no longer parks anything
//     (TaskDoesNotExist, TaskTimedOut, InvalidToken): such a token is
//     cleared, since no retry could ever wake it. Any other failure of a
//     wake is logged and keeps the token, so that the next action (or the
//     park's timeout, or the watchdog) wakes the execution.
//
// The package needs of Step Functions only the small interfaces defined
// here, which *sfn.Client satisfies, against AWS or the local endpoint
// (local/sfnlocal).
package execution
