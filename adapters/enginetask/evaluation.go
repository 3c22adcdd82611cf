package enginetask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Store is what an evaluation reads and writes. SaveEvaluation writes every changed
// target on the condition of its version and the rollout on the condition
// of its version (releasing the fleet's active-rollout lock when the rollout
// became final), and the evaluation's events into the outbox in the same
// transaction; a lost race returns an error wrapping rollout.ErrConflict
// and stores none of it.
type Store interface {
	LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error)
	// GetRollout reads the rollout item alone, for the tasks that do not
	// decide on its targets (prepare, continue, finish, a gate reading's
	// record): reading every target there cost a rollout of 1,000 targets
	// 380 KB a task.
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	AgentsByID(ctx context.Context, ids []string) (map[string]agent.Agent, error)
	SaveEvaluation(ctx context.Context, r rollout.Rollout, changed []rollout.Target, events ...notify.Event) error
	SetDesiredHash(ctx context.Context, agentIDs []string, hash string) error
}

// Evaluator runs evaluations with their side effects.
type Evaluator struct {
	Store     Store
	Executors executor.Registry
	Clock     func() time.Time
	// ServerTimezone is the deployment's default zone, MYRIARCH_DEFAULT_TIMEZONE ("" = UTC).
	ServerTimezone string
	// Liveness says which agents count as online: a connection counts while
	// the lease of the gateway task holding it is alive (each evaluation reads the
	// leases from Liveness.Source), and a closed connection counts as open
	// for Liveness.ReconnectGrace, so that a replaced gateway task or a load
	// balancer blip does not fail the targets in their health wait. The zero
	// value trusts the stored state.
	Liveness agent.Liveness
	// Metrics receives the embedded-metric-format records of finished
	// evaluations (stdout in Lambda, where CloudWatch Logs makes them metrics);
	// nil writes none.
	Metrics io.Writer
	// Gates reads the health gates of stages and batches; without it every
	// reading is red with an error.
	Gates GateReader
	// Audit records the engine's own decisions (an approval's expiry); nil
	// records none.
	Audit AuditLog
	// Updaters finds the myriarch-updaters linked to collectors; a version
	// evaluation judges a collector that takes no packages itself with its
	// updater's steps and package status. Nil judges every agent alone.
	Updaters LinkedUpdaters
	Log      *slog.Logger
}

// LinkedUpdaters finds the updater of each collector id (store.LinkedUpdaters).
type LinkedUpdaters interface {
	LinkedUpdaters(ctx context.Context, collectorIDs []string) (map[string]agent.Agent, error)
}

// passAttempts bounds the re-reads after lost races within one call.
const passAttempts = 5

// Evaluate loads the rollout, evaluates it, carries out the orders and stores
// the result.
//
// A configuration's starts run after the save. Setting a desired hash is
// what pushes the configuration, so every report of it finds its target
// stored in flight and is decided by the agent-event evaluation it sets off;
// with the orders first, a wave's first agents applied while the targets of
// 1,000 were still being stored, and their reports waited. A start that is
// stored but not carried out (the set failed, the task died) is not lost:
// the next evaluation finds the target in progress and its agent not asked for
// the hash, and orders it again (engine.evaluateInProgress); a failed set
// fails the evaluation, which the state machine retries. Its resets (a rollback)
// run before the save, as a version's orders do: nothing would order a
// stored reset again.
//
// A version's orders run before the save: an executor's Start returns the
// reference stored on the target, or fails it. Its starts are claimed first
// (claim.go): the targets are stored in progress on their versions, so that
// another evaluation, or this one after a lost race, does not start them
// again; the answers survive a lost save, and a claim left without one by
// an evaluation that died is started again after claimGrace.
func (p Evaluator) Evaluate(ctx context.Context, rolloutID string) (Evaluated, error) {
	return p.run(ctx, rolloutID, false, evaluate)
}

// EvaluateWatching is Evaluate that first asks the rollout's executor, if it watches
// its updates (executor.Watcher), about the targets in progress, once for
// all the attempts of the evaluation: the evaluation of the state machine's evaluate
// task (watch.go).
func (p Evaluator) EvaluateWatching(ctx context.Context, rolloutID string) (Evaluated, error) {
	return p.run(ctx, rolloutID, true, evaluate)
}

func evaluate(in engine.Input) (engine.Result, error) { return engine.Evaluate(in), nil }

// Evaluated is a stored evaluation: the engine's result and every target after it.
type Evaluated struct {
	engine.Result
	Targets []rollout.Target
}

// Act applies an operator action and evaluates right after it, so that the
// action takes effect at once (resume starts targets, abort cancels them).
func (p Evaluator) Act(ctx context.Context, rolloutID string, req engine.Request) (Evaluated, error) {
	return p.run(ctx, rolloutID, false, func(in engine.Input) (engine.Result, error) {
		res, err := engine.Apply(in, req)
		if err != nil || len(res.Missing) > 0 { // void until they are read (decideAsked)
			return res, err
		}
		in.Rollout, in.Targets = res.Rollout, merge(in.Targets, res.Changed)
		return then(res, engine.Evaluate(in)), nil
	})
}

// ordersOf is res with only its start orders (starts) or only the others:
// a configuration evaluation stores its starts before it carries them out (Evaluate),
// and carries out its resets (a rollback's desired hashes back to where the
// targets started) before it stores them, since no later evaluation would order
// a stored reset again.
func ordersOf(res engine.Result, starts bool) *engine.Result {
	res.Orders = slices.DeleteFunc(slices.Clone(res.Orders), func(o engine.Order) bool { return (o.Kind == engine.OrderStart) != starts })
	return &res
}

// then is a result followed by the evaluation after it: the later rollout,
// deadline and holds, every change (the later change of a target wins), the
// orders, events and starts of both in order, the agents either missed
// (void until read); the rollout changed if either changed it.
func then(first, next engine.Result) engine.Result {
	next.Missing = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(first.Missing), next.Missing...))))
	next.RolloutChanged = first.RolloutChanged || next.RolloutChanged
	next.Started += first.Started
	next.Changed = mergeChanged(first.Changed, next.Changed)
	next.Orders = append(append([]engine.Order(nil), first.Orders...), next.Orders...)
	next.Events = append(append([]engine.Event(nil), first.Events...), next.Events...)
	return next
}

// run loads, decides, carries out and saves, again after a lost race, and
// evaluates the targets it started once more (followUp). With
// watch, the executor's failures are asked on the first load and stay the
// observations of every attempt: each names the update it is about, so a
// target that moved on meanwhile is not touched by it.
func (p Evaluator) run(ctx context.Context, rolloutID string, watch bool, decide func(engine.Input) (engine.Result, error)) (Evaluated, error) {
	var lastErr error
	var failures map[string]engine.ExecutorFailure
	starts := p.newClaims()
	for attempt := 0; attempt < passAttempts; attempt++ {
		in, read, err := p.loadAsked(ctx, rolloutID)
		if err != nil {
			return Evaluated{}, err
		}
		if watch && attempt == 0 {
			failures = p.askExecutor(ctx, in)
		}
		in.ExecutorFailures = failures
		answered := starts.answered(in.Targets) // of starts made before a save this call lost
		in.Targets = merge(in.Targets, answered)
		res, err := p.decideAsked(ctx, &in, &read, decide)
		if err != nil {
			p.keepAnswers(ctx, starts, in.Rollout, answered)
			return Evaluated{}, err
		}
		res.Changed = mergeChanged(answered, res.Changed)
		starts.restartStale(&res, in.Targets, in.Now)
		if !res.Changes() && !res.RolloutChanged {
			p.logEvaluation(res)
			return Evaluated{Result: res, Targets: in.Targets}, nil
		}
		savedFirst := in.Rollout.Kind == policy.KindConfig
		if savedFirst {
			if _, err := p.carryOut(ctx, ordersOf(res, false), in.Agents, read, starts); err != nil {
				return Evaluated{}, err
			}
		} else if res, err = p.carryOutAndSettle(ctx, in, read, res, starts); err != nil {
			if errors.Is(err, errClaimLost) {
				lastErr = err
				continue
			}
			return Evaluated{}, err
		}
		// in is not read again (an attempt after a lost race loads anew):
		// the evaluation's changes go over its targets, not a copy of them
		after := rollout.OverlayInto(in.Targets, res.Changed)
		err = p.Store.SaveEvaluation(ctx, res.Rollout, res.Changed, notify.New(res.Rollout, after, res.Events, in.Now)...)
		if err == nil {
			p.logEvaluation(res)
			p.logEvents(res)
			p.audit(ctx, res, in.Now)
			WritePassMetrics(p.Metrics, in.Rollout, res.Rollout, in.Now)
			passed := Evaluated{Result: res, Targets: after}
			if savedFirst {
				if _, err := p.carryOut(ctx, ordersOf(res, true), in.Agents, read, starts); err != nil {
					return Evaluated{}, fmt.Errorf("evaluation of rollout %s stored, its orders not carried out (the next evaluation orders them again): %w", rolloutID, err)
				}
				return passed, nil
			}
			if ids := startedIDs(res); len(ids) > 0 {
				return p.followUp(ctx, rolloutID, passed, ids), nil
			}
			return passed, nil
		}
		if !errors.Is(err, rollout.ErrConflict) {
			return Evaluated{}, fmt.Errorf("save evaluation of rollout %s: %w", rolloutID, err)
		}
		lastErr = err
	}
	return Evaluated{}, fmt.Errorf("save evaluation of rollout %s after %d attempts: %w", rolloutID, passAttempts, lastErr)
}

// followUp evaluates the targets a version evaluation started once more, right
// after it. Their agents may have reported while the executor's starts ran
// and the evaluation stored (an update can be quick, and the starts of a wave
// take a while): those reports reached the agent-event path while the
// targets were still stored pending, and the evaluation read the agents before
// them. A report after the store is the agent-event path's again. So the
// agents of the started targets are read once more, and those stored since
// the evaluation began (lastSeen is the time of an agent's last stored change)
// get targeted evaluations, 100 at a time (EvaluateAgents), which race the
// agent-event evaluations only over those agents; one that must decide the
// whole rollout is a whole evaluation. If a read or an evaluation fails, the started
// evaluation stands and the next evaluation catches up. A configuration evaluation needs
// none: its targets are stored before any agent is asked (Evaluate).
func (p Evaluator) followUp(ctx context.Context, id string, started Evaluated, ids []string) Evaluated {
	began := map[string]time.Time{}
	for _, t := range started.Targets {
		if t.StartedAt != nil {
			began[t.AgentID] = *t.StartedAt
		}
	}
	agents, err := p.Store.AgentsByID(ctx, ids)
	if err != nil {
		p.logger().Warn("evaluation after starting targets", "rollout", id, "error", err)
		return started
	}
	var reported []string
	for _, aid := range ids {
		if a, ok := agents[aid]; ok && !a.LastSeen.Before(began[aid].Add(-clockSkew)) {
			reported = append(reported, aid)
		}
	}
	out := started
	for i := 0; i < len(reported); i += followUpBatch {
		t, err := p.passAgents(ctx, id, reported[i:min(i+followUpBatch, len(reported))], agents)
		if err != nil {
			p.logger().Warn("evaluation after starting targets", "rollout", id, "error", err)
			return out
		}
		if t.whole != nil {
			out = *t.whole
			continue
		}
		out.Targets = merge(out.Targets, t.changed)
		if d := t.deadline; !d.IsZero() && (out.NextDeadline.IsZero() || d.Before(out.NextDeadline)) {
			out.NextDeadline = d
		}
	}
	return out
}

// clockSkew is how far a gateway's clock (lastSeen) may be behind the
// engine's (startedAt) for a report to count as stored since the evaluation
// began; an agent stored just before costs an evaluation that changes nothing.
const clockSkew = 5 * time.Second

// followUpBatch is the agents of one targeted evaluation of a follow-up, as many
// as an agent-event batch.
const followUpBatch = 100

// startedIDs are the agents of an evaluation's start orders.
func startedIDs(res engine.Result) []string {
	var ids []string
	for _, o := range res.Orders {
		if o.Kind == engine.OrderStart {
			ids = append(ids, o.AgentID)
		}
	}
	return ids
}

// load reads the input of an evaluation of the whole rollout id with every
// agent of its targets.
func (p Evaluator) load(ctx context.Context, id string) (engine.Input, error) {
	in, _, err := p.loadWith(ctx, id, agentIDs)
	in.Read = nil // every agent: none is missing
	return in, err
}

// loadAsked reads the input of an evaluation of the whole rollout id with
// the agents of its targets in flight, the ones every evaluation judges,
// and what a store that keeps it read of them (ReadOnce); decideAsked
// reads the others the engine asks for (engine.Input.Read). A wave of
// 100,000 targets under maxConcurrent 1,000 is then decided on the agents
// of the 1,000 in flight and the next 1,000 at most, not of all 100,000.
func (p Evaluator) loadAsked(ctx context.Context, id string) (engine.Input, any, error) {
	return p.loadWith(ctx, id, func(ts []rollout.Target) []string {
		var ids []string
		for _, t := range ts {
			if t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying {
				ids = append(ids, t.AgentID)
			}
		}
		return ids
	})
}

// loadWith reads rollout id, its targets and the agents that which names
// of them (Input.Read says which), the liveness leases and the clock.
func (p Evaluator) loadWith(ctx context.Context, id string, which func([]rollout.Target) []string) (engine.Input, any, error) {
	r, ts, err := p.Store.LoadRollout(ctx, id)
	if err != nil {
		return engine.Input{}, nil, fmt.Errorf("load rollout %s: %w", id, err)
	}
	in := engine.Input{Rollout: r, Targets: ts, Agents: map[string]agent.Agent{}, Read: map[string]bool{}}
	read, err := p.readAgents(ctx, &in, nil, which(ts))
	if err != nil {
		return engine.Input{}, nil, err
	}
	return in, read, p.observe(ctx, &in)
}

// decideAsked runs decide over in, and again after reading the agents each
// run listed missing, until none is; read gathers what the store kept of
// the reads (ReadOnce). Each round reads at least one agent more, so the
// rounds are bounded by the targets; most evaluations need one or two.
func (p Evaluator) decideAsked(ctx context.Context, in *engine.Input, read *any, decide func(engine.Input) (engine.Result, error)) (engine.Result, error) {
	for round := 0; ; round++ {
		res, err := decide(*in)
		if err != nil || len(res.Missing) == 0 {
			return res, err
		}
		if round > len(in.Targets) {
			return engine.Result{}, fmt.Errorf("evaluation of rollout %s: still missing %d agents after %d rounds", in.Rollout.ID, len(res.Missing), round)
		}
		if *read, err = p.readAgents(ctx, in, *read, res.Missing); err != nil {
			return engine.Result{}, err
		}
	}
}

// readAgents reads agents ids into in (Agents, and Read for every one
// asked, found or not: one not found was deleted), with their updaters in
// a version rollout, and returns into with what a store that keeps it
// read of them (ReadOnce).
func (p Evaluator) readAgents(ctx context.Context, in *engine.Input, into any, ids []string) (any, error) {
	var agents map[string]agent.Agent
	var err error
	if ro, ok := p.Store.(ReadOnce); ok {
		agents, into, err = ro.AgentsForEvaluation(ctx, ids, into)
	} else {
		agents, err = p.Store.AgentsByID(ctx, ids)
	}
	if err != nil {
		return nil, fmt.Errorf("load agents of rollout %s: %w", in.Rollout.ID, err)
	}
	if agents, err = p.withUpdaters(ctx, in.Rollout, agents); err != nil {
		return nil, fmt.Errorf("evaluation of rollout %s: %w", in.Rollout.ID, err)
	}
	for _, id := range ids {
		in.Read[id] = true
	}
	maps.Copy(in.Agents, agents)
	return into, nil
}

// ReadOnce is a Store that sets the desired hashes an evaluation orders on
// the agents as the evaluation read them, without reading them again
// (store.Store): AgentsForEvaluation is AgentsByID that also returns what
// SetDesiredHashOver needs of that read, added to into when into is what an
// earlier call returned; SetDesiredHashOver without a read (nil) is
// SetDesiredHash.
type ReadOnce interface {
	AgentsForEvaluation(ctx context.Context, ids []string, into any) (map[string]agent.Agent, any, error)
	SetDesiredHashOver(ctx context.Context, ids []string, hash string, agents map[string]agent.Agent, read any) error
}

func agentIDs(ts []rollout.Target) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.AgentID
	}
	return ids
}

// input is the input of an evaluation over targets ts of rollout r: their agents,
// the liveness leases, the clock.
func (p Evaluator) input(ctx context.Context, r rollout.Rollout, ts []rollout.Target) (engine.Input, error) {
	agents, err := p.Store.AgentsByID(ctx, agentIDs(ts))
	if err != nil {
		return engine.Input{}, fmt.Errorf("load agents of rollout %s: %w", r.ID, err)
	}
	return p.inputOf(ctx, r, ts, agents)
}

// inputOf is the input of an evaluation over targets ts of rollout r with their
// agents.
func (p Evaluator) inputOf(ctx context.Context, r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent) (engine.Input, error) {
	agents, err := p.withUpdaters(ctx, r, agents)
	if err != nil {
		return engine.Input{}, fmt.Errorf("evaluation of rollout %s: %w", r.ID, err)
	}
	in := engine.Input{Rollout: r, Targets: ts, Agents: agents}
	return in, p.observe(ctx, &in)
}

// observe completes in with the liveness leases and the clock.
func (p Evaluator) observe(ctx context.Context, in *engine.Input) error {
	live, err := p.Liveness.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("evaluation of rollout %s: %w", in.Rollout.ID, err)
	}
	in.Liveness, in.Now, in.ServerTimezone = live, p.Clock().UTC(), p.ServerTimezone
	return nil
}

// carryOutAndSettle performs the orders of an evaluation. When the adapter itself
// changed targets (a Start that failed is marked failed), the engine decided
// without knowing it: the evaluation is evaluated again over the changed targets,
// and its own orders carried out, until the adapter changes nothing more.
// Without this the stored state and the next deadline disagree (the old
// deadline was applyTimeout for a target that had already failed, and the
// threshold was not applied until then). Each round settles at least one
// target for good, so the rounds are bounded by the targets.
func (p Evaluator) carryOutAndSettle(ctx context.Context, in engine.Input, read any, res engine.Result, starts *claims) (engine.Result, error) {
	settled, err := p.carryOut(ctx, &res, in.Agents, nil, starts)
	for round := 0; err == nil && settled > 0 && round < len(in.Targets); round++ {
		in.Rollout, in.Targets = res.Rollout, merge(in.Targets, res.Changed)
		var next engine.Result
		if next, err = p.decideAsked(ctx, &in, &read, evaluate); err != nil {
			break
		}
		if settled, err = p.carryOut(ctx, &next, in.Agents, nil, starts); err != nil {
			break
		}
		res = then(res, next)
	}
	return res, err
}

// carryOut performs the orders of an evaluation. For a configuration it sets desired
// hashes (grouped by hash), on the agents as the evaluation read them when
// the store kept that read (ReadOnce; read is nil otherwise); for a version
// it claims the starts and calls the executor (claim.go), and a target
// whose Start fails is marked failed in the result before it is stored;
// settled counts those.
func (p Evaluator) carryOut(ctx context.Context, res *engine.Result, agents map[string]agent.Agent, read any, starts *claims) (settled int, err error) {
	if len(res.Orders) == 0 {
		return 0, nil
	}
	if res.Rollout.Kind == policy.KindConfig {
		byHash := map[string][]string{}
		for _, o := range res.Orders {
			if o.Kind != engine.OrderCancel {
				byHash[o.Ref] = append(byHash[o.Ref], o.AgentID)
			}
		}
		ro, over := p.Store.(ReadOnce)
		for h, ids := range byHash {
			var err error
			if over {
				err = ro.SetDesiredHashOver(ctx, ids, h, agents, read)
			} else {
				err = p.Store.SetDesiredHash(ctx, ids, h)
			}
			if err != nil {
				return 0, fmt.Errorf("set desired hash %s: %w", h, err)
			}
		}
		return 0, nil
	}
	return p.carryOutVersion(ctx, res, agents, starts)
}

// carryOutVersion claims the starts of a version evaluation, then calls the
// executor for them and for the other orders. When a claim is lost, only
// the starts claimed before it are carried out, and the error wraps
// errClaimLost: the evaluation runs again.
func (p Evaluator) carryOutVersion(ctx context.Context, res *engine.Result, agents map[string]agent.Agent, starts *claims) (settled int, err error) {
	r := res.Rollout
	ex, exErr := p.Executors.For(r.Executor)
	if exErr == nil {
		exErr = ex.Validate(ctx, r)
	}
	at := make(map[string]int, len(res.Changed))
	for i, t := range res.Changed {
		at[t.AgentID] = i
	}
	var won map[string]bool
	var lost error
	if exErr == nil {
		if won, lost = starts.claim(ctx, res, at); lost != nil && !errors.Is(lost, errClaimLost) {
			return 0, lost
		}
	}
	for _, o := range res.Orders {
		i, ok := at[o.AgentID]
		if !ok || lost != nil && !(o.Kind == engine.OrderStart && won[o.AgentID]) {
			continue // after a lost claim only the starts claimed are this evaluation's
		}
		t := res.Changed[i]
		call := executor.Call{Rollout: r, Target: t, Agent: agents[t.AgentID], Version: o.Ref, Operation: callOperation(o.Kind)}
		switch {
		case o.Kind == engine.OrderCancel:
			// best effort, and not held up by Validate: an abort must not wait
			// for an executor that is unreachable or was misconfigured since
			if ex == nil {
				p.logger().Warn("executor cancel skipped", "rollout", r.ID, "agent", t.AgentID, "error", exErr)
			} else if cerr := ex.Cancel(ctx, call); cerr != nil {
				p.logger().Warn("executor cancel failed", "rollout", r.ID, "agent", t.AgentID, "error", cerr)
			}
		case exErr != nil && o.Kind == engine.OrderStart:
			res.Changed[i] = engine.MarkStartFailed(t, p.Clock().UTC(), exErr.Error())
			settled++
		case exErr != nil:
			return settled, fmt.Errorf("executor %s: %w", r.Executor, exErr)
		default:
			ref, serr := ex.Start(ctx, call)
			if o.Kind == engine.OrderStart {
				ref = starts.answer(r, t, ref, serr, p.Clock().UTC())
			}
			if serr != nil && o.Kind == engine.OrderStart {
				res.Changed[i] = engine.MarkStartFailed(t, p.Clock().UTC(), serr.Error())
				settled++
				continue
			}
			if serr != nil {
				return settled, fmt.Errorf("executor %s reset of %s: %w", r.Executor, t.AgentID, serr)
			}
			res.Changed[i].ExternalRef = ref
		}
	}
	return settled, lost
}

// keepAnswers stores the answers of starts this call made before a save it
// lost, when the evaluation after the re-read decides nothing (an action refused
// now): otherwise only a claim's restart would tell the executor's answer
// again. A failure to store them is logged; the evaluation's error is returned.
func (p Evaluator) keepAnswers(ctx context.Context, starts *claims, r rollout.Rollout, answered []rollout.Target) {
	if len(answered) == 0 || starts.store == nil {
		return
	}
	if err := starts.store.SaveTargets(ctx, r, answered); err != nil {
		p.logger().Warn("store the answers of claimed starts", "rollout", r.ID, "error", err)
	}
}

// logEvaluation logs the one line of an evaluation (engine.Result.Fields):
// what it started and what held the rest back, whether or not it stored
// anything.
func (p Evaluator) logEvaluation(res engine.Result) {
	p.logger().Info("evaluation", res.Fields()...)
}

func (p Evaluator) logEvents(res engine.Result) {
	for _, e := range res.Events {
		p.logger().Info("rollout event", "type", e.Type, "rollout", res.Rollout.ID, "fleet", res.Rollout.Fleet, "kind", string(res.Rollout.Kind), "reason", e.Reason)
	}
}

func (p Evaluator) logger() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

// merge overlays changed targets on all targets; with none changed it is
// all itself, not a copy (callers read the targets, and a copy of 100,000
// is 25 MB).
func merge(all, changed []rollout.Target) []rollout.Target {
	if len(changed) == 0 {
		return all
	}
	return rollout.Overlay(all, changed)
}

// mergeChanged unites the targets changed by an action and by the evaluation after
// it; the later change of a target wins.
func mergeChanged(first, second []rollout.Target) []rollout.Target {
	at := make(map[string]int, len(first))
	for i, t := range first {
		at[t.AgentID] = i
	}
	out := append([]rollout.Target(nil), first...)
	for _, c := range second {
		if i, ok := at[c.AgentID]; ok {
			out[i] = c
		} else {
			out = append(out, c)
		}
	}
	return out
}

// callOperation is the executor operation of an order.
func callOperation(k engine.OrderKind) string {
	switch k {
	case engine.OrderReset:
		return executor.OpReset
	case engine.OrderCancel:
		return executor.OpCancel
	}
	return executor.OpStart
}

// withUpdaters is the agents of a version evaluation with what their linked
// updaters reported: a collector that takes no packages itself is updated
// by a myriarch-updater beside it, whose steps and package status are its
// progress (agent.WithUpdater). The map given is not changed.
func (p Evaluator) withUpdaters(ctx context.Context, r rollout.Rollout, agents map[string]agent.Agent) (map[string]agent.Agent, error) {
	if p.Updaters == nil || r.Kind != policy.KindVersion {
		return agents, nil
	}
	var ids []string
	for id, a := range agents {
		if !a.InstallsOwnPackages() {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return agents, nil
	}
	slices.Sort(ids)
	updaters, err := p.Updaters.LinkedUpdaters(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the updaters of %d collectors: %w", len(ids), err)
	}
	out := maps.Clone(agents)
	for c, u := range updaters {
		if a, ok := out[c]; ok {
			out[c] = a.WithUpdater(u)
		}
	}
	return out, nil
}
