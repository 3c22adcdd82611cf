// Package engine decides, for one rollout at one moment, what happens to each
// of its targets and waves: state + observations + now -> result. It performs
// no I/O and reads no clock; adapters (the engine Lambdas) load the input,
// carry out the orders of the result and store what changed.
package engine

import (
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// Input is everything one evaluation needs.
type Input struct {
	Rollout rollout.Rollout
	Targets []rollout.Target       // every target of the rollout
	Agents  map[string]agent.Agent // the agents of those targets, by id; a missing agent was deleted
	// Read, when not nil, says which agents the adapter read: Agents holds
	// those of them that exist, and an agent of a target that Read does not
	// name was not read. An evaluation that needed one lists it in
	// Result.Missing and is to be run again with it read; its result is
	// otherwise void. Nil: every agent of the targets was read.
	Read map[string]bool
	Now  time.Time
	// ServerTimezone is the deployment's default zone, MYRIARCH_DEFAULT_TIMEZONE ("" = UTC).
	ServerTimezone string
	// Liveness says which agents count as online; the zero value trusts
	// each agent's stored connection state.
	Liveness agent.Liveness
	// ExecutorFailures are the updates a watching executor (an AWX job)
	// reported failed on its side, by agent id: observations like the
	// agents', which the adapter asked the executor for. Nil when none
	// were asked.
	ExecutorFailures map[string]ExecutorFailure
}

// ExecutorFailure is an executor's word that the update it started for a
// target failed. It names the update by the target's external reference,
// so that a report of an earlier attempt's job fails no later attempt.
type ExecutorFailure struct {
	ExternalRef string
	Reason      string // "AWX job 42 failed (status failed): ..."
}

// OrderKind says what an adapter must do for a target.
type OrderKind string

const (
	// OrderStart: for a configuration set the desired hash to Ref and push it;
	// for a version call the executor's Start with Ref.
	OrderStart OrderKind = "start"
	// OrderReset: roll back to Ref (the from hash or version).
	OrderReset OrderKind = "reset"
	// OrderCancel: for a version, call the executor's Cancel.
	OrderCancel OrderKind = "cancel"
)

// Order is one side effect the adapter carries out.
type Order struct {
	Kind    OrderKind `json:"kind"`
	AgentID string    `json:"agentId"`
	Ref     string    `json:"ref"`
	Attempt int       `json:"attempt"`
}

// Event is a notification the rollout emits.
type Event struct {
	Type   string `json:"type"` // a rollout.Event* constant (rollout.started, rollout.paused, ...); core/notify's catalogue describes them
	Reason string `json:"reason,omitempty"`
}

// Result of one evaluation: the new rollout, the targets that changed, the
// orders to carry out and the next moment something can change without an
// event.
type Result struct {
	Rollout rollout.Rollout
	// RolloutChanged says whether the evaluation changed anything stored on
	// the rollout item (its status and reason, waves, approvals, stages with
	// their bakes, gates, cleared batches and holds, ...): an evaluation
	// that changed no target and not the rollout writes nothing.
	RolloutChanged bool
	Changed        []rollout.Target
	Orders         []Order
	Events         []Event
	// NextDeadline is zero when nothing changes without an agent event or a
	// person (waiting for approval, paused with nothing in flight, final).
	NextDeadline time.Time
	// GatesDue lists the gates whose reading is due now: the adapter reads
	// them, records the readings and evaluates again.
	GatesDue []GateDue
	// Started counts the targets the evaluation started; Held, the targets
	// that could have started and were held back, by what held them. With
	// the rest they make the evaluation's log line (Fields).
	Started int
	Held    Held
	// Missing lists, sorted, the agents the evaluation needed and
	// Input.Read does not name. When it is not empty the rest of the result
	// is void: the adapter reads them and evaluates again.
	Missing []string
}

// Held counts the targets of a running wave that had not started and were
// held back in one evaluation, by the rule that held them. A target is
// counted once, under the first rule that held it.
type Held struct {
	Window         int // outside every maintenance window of its zone
	Offline        int // its agent is offline, within offlineGracePeriod
	MaxConcurrent  int // maxConcurrent targets were in flight already
	MaxUnavailable int // a later batch of its pass (maxUnavailable targets at a time)
	BatchGate      int // in the batch after one whose batch gate is still reading
	Freeze         int // its stage waits for a freeze to end
}

// Changes reports whether the evaluation changed a target, ordered or
// emitted anything.
func (r Result) Changes() bool {
	return len(r.Changed) > 0 || len(r.Orders) > 0 || len(r.Events) > 0
}

// evaluation is the working state of one evaluation of a rollout.
type evaluation struct {
	now  time.Time
	tz   string
	live agent.Liveness
	// in is the rollout and targets as they came: the result compares
	// with them to tell what changed.
	in     Input
	inR    rollout.Rollout // in.Rollout as r began: cloneRollout(in.Rollout)
	r      rollout.Rollout
	ts     []rollout.Target // the working copy of in.Targets
	all    targets          // every target of ts
	agents map[string]agent.Agent
	read   map[string]bool     // Input.Read
	missed map[string]struct{} // agents needed and not read
	orders []Order
	events []Event
	dl     deadline
	// gatesDue collects the gates to read (GateDue).
	gatesDue []GateDue
	// execFailures are Input.ExecutorFailures.
	execFailures map[string]ExecutorFailure
	started      int
	held         Held

	windowByZone map[*time.Location]zoneWindow
}

func newEvaluation(in Input) *evaluation {
	e := &evaluation{
		now:          in.Now,
		tz:           in.ServerTimezone,
		live:         in.Liveness,
		in:           in,
		inR:          cloneRollout(in.Rollout),
		r:            cloneRollout(in.Rollout),
		ts:           append([]rollout.Target(nil), in.Targets...),
		agents:       in.Agents,
		read:         in.Read,
		execFailures: in.ExecutorFailures,
		dl:           deadline{now: in.Now},
	}
	e.all = targetsOf(e.ts)
	return e
}

func (e *evaluation) result() Result {
	return Result{
		Rollout: e.r, RolloutChanged: !reflect.DeepEqual(e.inR, e.r), Changed: changedTargets(e.in.Targets, e.ts),
		Orders: e.orders, Events: e.events, NextDeadline: e.dl.next(), GatesDue: e.gatesDue,
		Started: e.started, Held: e.held, Missing: slices.Sorted(maps.Keys(e.missed)),
	}
}

func (e *evaluation) emit(typ, reason string) {
	e.events = append(e.events, Event{Type: typ, Reason: reason})
}

func (e *evaluation) order(k OrderKind, t rollout.Target, ref string) {
	e.orders = append(e.orders, Order{Kind: k, AgentID: t.AgentID, Ref: ref, Attempt: t.Attempt})
}

// agent is the agent id, and whether it exists. One that was not read
// (Input.Read) counts as missing, and the evaluation's result is void.
func (e *evaluation) agent(id string) (agent.Agent, bool) {
	a, ok := e.agents[id]
	if !ok {
		e.unread(id)
	}
	return a, ok
}

// unread reports whether agent id was not read (Input.Read), and notes it
// as missing if so.
func (e *evaluation) unread(id string) bool {
	if e.read == nil || e.read[id] {
		return false
	}
	if e.missed == nil {
		e.missed = map[string]struct{}{}
	}
	e.missed[id] = struct{}{}
	return true
}

// online applies the liveness rule. An agent that counts as online only by
// its reconnect grace is judged again when the grace ends, since no event
// comes if it never reconnects.
func (e *evaluation) online(a agent.Agent) bool {
	online, graceEnd := e.live.Online(a, e.now)
	e.dl.at(graceEnd)
	return online
}

// Evaluate runs one evaluation of a rollout. Rollouts in a final status and in
// failed are not evaluated: their targets stay as they are until a person acts.
func Evaluate(in Input) Result {
	e := newEvaluation(in)
	switch e.r.Status {
	case rollout.RollingBack:
		e.evaluateRollback()
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
		e.begin()
		e.evaluateInFlight()
		e.advanceWaves()
	default:
		return e.result()
	}
	e.deriveProgress()
	return e.result()
}

// begin moves a pending rollout to running on its first evaluation; a rollout
// paused before it began starts when it is resumed.
func (e *evaluation) begin() {
	if e.r.StartedAt != nil || (e.r.Status != rollout.Pending && e.r.Status != rollout.Running) {
		return
	}
	e.r.Status = rollout.Running
	e.r.StartedAt = timePtr(e.now)
	e.emit(rollout.EventStarted, "")
}

func timePtr(t time.Time) *time.Time { return &t }

func cloneRollout(r rollout.Rollout) rollout.Rollout {
	r.Waves = append([]rollout.Wave(nil), r.Waves...)
	r.Stages = append([]rollout.Stage(nil), r.Stages...)
	for i := range r.Stages {
		r.Stages[i].Passes = append([]rollout.Pass(nil), r.Stages[i].Passes...)
	}
	for i := range r.Waves {
		r.Waves[i].Approvals = append([]rollout.Decision(nil), r.Waves[i].Approvals...)
	}
	r.RollbackQueue = append([]int(nil), r.RollbackQueue...)
	if r.AckedFailures != nil {
		acked := make(map[int][]string, len(r.AckedFailures))
		for k, v := range r.AckedFailures {
			acked[k] = append([]string(nil), v...)
		}
		r.AckedFailures = acked
	}
	return r
}
