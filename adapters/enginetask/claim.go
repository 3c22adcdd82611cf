package enginetask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// A version target's Start is claimed before the executor is called: the
// evaluation first stores the targets it starts in progress, with no external
// reference yet, each on the condition of the version it read and of the
// rollout's version (TargetStore.SaveTargets), and calls the executor only
// for the targets it claimed. The evaluation's save then stores the answers (the
// reference, or the target failed) with the rest of its decision.
//
// Why: a version evaluation used to call the executor first and store the
// started targets after, so that a Start that failed is stored failed. A
// second evaluation that read the targets pending in between started them
// again with the same delivery id, about 0.25 s after the first:
//
//   - the evaluation itself, run again because its save lost a race: the state
//     machine's evaluation that starts wave 1 at the end of wave 0's health wait
//     also stores wave 0's targets succeeded, and an agent event's targeted
//     evaluation that stored one of them first (its collector reported) made that
//     save fail; so did a task token stored or cleared on the rollout
//     meanwhile. The evaluation read again, found wave 1 still pending, and
//     started all of it a second time;
//   - another evaluation at the same time (the state machine's and an agent
//     event's whole evaluation, an operator's action): both read the target
//     pending and both started it.
//
// Receivers de-duplicate by delivery id, but each repetition was a second
// call for one decision. Now the evaluation that loses the race loses it
// before it calls anything, reads again and finds the targets in progress;
// the answers of the starts an evaluation made are kept across its re-reads
// (claims.answered), so that a save lost after the starts loses neither a
// reference nor a failure.
//
// A claim whose evaluation ended before it stored the answer (the task timed out
// or failed between the two) is started again by an evaluation after claimGrace,
// with the same delivery id: a Start is repeated only then, or after a call
// that failed (the executor's own retries). Resets are not claimed: a reset
// that fails fails the evaluation, and only a reset that is not stored is
// ordered again.

// claimGrace is how long a claimed start may wait for its answer before a
// evaluation starts it again: longer than any task that runs an evaluation lives (the
// engine's 120 s, the agent event's 60 s, the API's 29 s; infra), so that
// the evaluation that claimed it has surely ended.
const claimGrace = 5 * time.Minute

// claimChunk is the targets of one claim: one transaction of SaveTargets
// (at most 100 items, the rollout's condition among them), so that a lost
// race leaves every chunk before it claimed whole.
const claimChunk = 99

// errClaimLost is wrapped by an evaluation's error when another evaluation stored
// a claimed target or the rollout first: the evaluation reads again.
var errClaimLost = errors.New("another evaluation changed the rollout or its targets first")

// claims are the version starts of one call of run across its attempts:
// where to claim them, and the executor's answers.
type claims struct {
	// store is nil when the store cannot write targets on conditions (test
	// stores): nothing is claimed, and a start is at-least-once as before.
	store   TargetStore
	answers map[string]answer // by agent
}

// answer is what the executor said to the Start of a claim.
type answer struct {
	attempt   int
	startedAt time.Time // the claim's: a later claim of the attempt is another
	ref       string
	failure   string // the Start's error; "" when it was accepted
	at        time.Time
}

func (p Evaluator) newClaims() *claims {
	st, _ := p.Store.(TargetStore)
	return &claims{store: st, answers: map[string]answer{}}
}

// claimed reports whether t is a claimed start whose answer is not stored:
// a version target in progress toward its version without an external
// reference (every answer stores one; a claim clears the last attempt's).
func claimed(k policy.Kind, t rollout.Target) bool {
	return k == policy.KindVersion && t.Status == rollout.TargetInProgress && t.ExternalRef == "" && t.RollbackAt == nil && t.StartedAt != nil
}

// claim stores the targets of res's start orders in progress, chunk by
// chunk, and returns the agents it claimed. at indexes res.Changed by
// agent. A claimed target's version in res.Changed is the stored one
// after. When another evaluation stored first, the error wraps
// errClaimLost and the chunks before it are claimed all the same.
func (c *claims) claim(ctx context.Context, res *engine.Result, at map[string]int) (map[string]bool, error) {
	var idx []int
	for _, o := range res.Orders {
		if i, ok := at[o.AgentID]; ok && o.Kind == engine.OrderStart {
			res.Changed[i].ExternalRef = "" // the last attempt's; this one's is the answer's
			idx = append(idx, i)
		}
	}
	won := make(map[string]bool, len(idx))
	for start := 0; start < len(idx); start += claimChunk {
		chunk := idx[start:min(start+claimChunk, len(idx))]
		if c.store != nil {
			ts := make([]rollout.Target, len(chunk))
			for k, i := range chunk {
				ts[k] = res.Changed[i]
			}
			if err := c.store.SaveTargets(ctx, res.Rollout, ts); err != nil {
				if errors.Is(err, rollout.ErrConflict) {
					err = fmt.Errorf("%w: %w", errClaimLost, err)
				}
				return won, fmt.Errorf("claim the starts of rollout %s: %w", res.Rollout.ID, err)
			}
		}
		for _, i := range chunk {
			if c.store != nil {
				res.Changed[i].Version++
			}
			won[res.Changed[i].AgentID] = true
		}
	}
	return won, nil
}

// answer records the executor's answer to the claimed start of t and
// returns the reference to store: the answer's, or, when the executor gave
// none, the start's delivery id (a claimed target is told from an answered
// one by its reference).
func (c *claims) answer(r rollout.Rollout, t rollout.Target, ref string, err error, now time.Time) string {
	if c.store == nil || t.StartedAt == nil {
		return ref
	}
	if ref == "" && err == nil {
		ref = executor.DeliveryID(r.ID, t.AgentID, t.Attempt, executor.OpStart)
	}
	a := answer{attempt: t.Attempt, startedAt: *t.StartedAt, ref: ref, at: now}
	if err != nil {
		a.ref, a.failure = "", err.Error()
	}
	c.answers[t.AgentID] = a
	return ref
}

// answered are the targets of ts whose claimed start this call carried out
// before a save it lost, with the answer: the reference, or the target
// failed as the evaluation would have stored it. A target that moved on since
// (another claim, a stored answer) is left as it is.
func (c *claims) answered(ts []rollout.Target) []rollout.Target {
	var out []rollout.Target
	for _, t := range ts {
		a, ok := c.answers[t.AgentID]
		if !ok || t.Attempt != a.attempt || t.StartedAt == nil || !t.StartedAt.Equal(a.startedAt) || t.ExternalRef != "" {
			continue
		}
		switch {
		case a.failure == "":
			t.ExternalRef = a.ref
		case t.Status == rollout.TargetInProgress:
			t = engine.MarkStartFailed(t, a.at, a.failure)
		default:
			continue
		}
		out = append(out, t)
	}
	return out
}

// restartStale orders again the claimed starts of res's targets whose evaluation
// ended before it stored their answer (claimed longer than claimGrace ago),
// as claims of now. Only where the engine evaluates targets in flight, and
// only with a store that claims.
func (c *claims) restartStale(res *engine.Result, all []rollout.Target, now time.Time) {
	r := res.Rollout
	switch r.Status {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
	default:
		return
	}
	if c.store == nil || r.Kind != policy.KindVersion {
		return
	}
	ordered := map[string]bool{}
	for _, o := range res.Orders {
		ordered[o.AgentID] = true
	}
	var again []rollout.Target
	for _, t := range merge(all, res.Changed) {
		if !claimed(r.Kind, t) || ordered[t.AgentID] || now.Before(t.StartedAt.Add(claimGrace)) {
			continue
		}
		t.StartedAt = &now
		again = append(again, t)
		res.Orders = append(res.Orders, engine.Order{Kind: engine.OrderStart, AgentID: t.AgentID, Ref: t.ToRef, Attempt: t.Attempt})
	}
	res.Changed = mergeChanged(res.Changed, again)
}
