package engine

import "time"

// Fields gives the evaluation as the key-value pairs of one structured log
// line (the args of log/slog), after Nomad's ReconcileResults.Fields: the
// adapter logs it once per evaluation, and it answers "why did nothing
// start?" without a debugger. The keys are always present, so that a
// query over the logs can rely on them:
//
//   - rollout, fleet, kind, status, reason: the rollout after the
//     evaluation (reason is its status reason: a pause, an approval waited
//     for, a freeze);
//   - started: the targets started;
//   - heldByWindow, offline, heldByMaxConcurrent, heldByMaxUnavailable,
//     heldByBatchGate, heldByFreeze: the targets that had not started and
//     were held back, by the rule that held them (Held);
//   - gatesDue: the gate readings the adapter takes now;
//   - nextDeadline: when the rollout is evaluated again without an event
//     (RFC 3339, UTC), or "none";
//   - changed, events: the targets changed and the events emitted.
//
// Example: a wave of 40 with maxConcurrent 5 and 5 in flight gives
// started=0 heldByMaxConcurrent=35: the targets behind maxConcurrent are
// not judged before their turn, so an offline agent among them counts
// there, not under offline (startTargets).
func (r Result) Fields() []any {
	next := "none"
	if !r.NextDeadline.IsZero() {
		next = r.NextDeadline.UTC().Format(time.RFC3339)
	}
	return []any{
		"rollout", r.Rollout.ID,
		"fleet", r.Rollout.Fleet,
		"kind", string(r.Rollout.Kind),
		"status", string(r.Rollout.Status),
		"reason", r.Rollout.StatusReason,
		"started", r.Started,
		"heldByWindow", r.Held.Window,
		"offline", r.Held.Offline,
		"heldByMaxConcurrent", r.Held.MaxConcurrent,
		"heldByMaxUnavailable", r.Held.MaxUnavailable,
		"heldByBatchGate", r.Held.BatchGate,
		"heldByFreeze", r.Held.Freeze,
		"gatesDue", len(r.GatesDue),
		"nextDeadline", next,
		"changed", len(r.Changed),
		"events", len(r.Events),
	}
}
