// Package plannertask is the adapter between the planner and the places
// that ask it to plan, as enginetask is the engine's: the runner that plans
// one fleet and kind and carries out what a planner.Decision leaves to its
// caller (the executor Cancel of superseded targets, the evaluation metrics of a
// supersede, waking the execution of a rollout the run ended, starting the
// execution of a rollout it created), the wire of the planner Lambda
// (Request in, Reply out, counts as integers, golden JSON in testdata/).
// The Lambda client the api and agent-event functions plan through is in
// plannertask/remote.
//
// Contract:
//   - The planner is the single writer of rollouts. A Runner serializes
//     its runs (one at a time per Runner; the Lambda has reserved
//     concurrency 1), and PlanFleet may be called concurrently.
//   - A run that lost a race (rollout.ErrConflict) is planned again, up to
//     three times; the error of the last attempt is returned.
//   - What follows a stored decision does not undo it: a failed Cancel or
//     wake is logged (the target is ended anyway, the token is kept for the
//     next wake); a failed start of the created rollout's execution is
//     returned, and the watchdog starts it if no retry does.
//   - Errors of the Lambda client (remote.Lambda): the invocation failed,
//     the function failed, or its answer is not a Reply. None of them says
//     whether the planner ran: the scheduled run catches up.
package plannertask
