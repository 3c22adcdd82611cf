// Package notify turns the events of rollouts into notifications: the
// catalogue of event types, the envelope they are published in on Amazon
// EventBridge (source, detail-type, detail) and the detail itself, which
// carries a stable id and a summary of the rollout.
//
// A notification is written to the outbox (the store's events table) in the
// same transaction as the change of the rollout that caused it, and
// delivered from that table's stream: to the EventBridge bus in the cloud
// (functions/notify), to a webhook locally. The API's feed reads the outbox.
// The package is pure: it builds values, the adapters store and send them.
package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Source is the EventBridge source of every notification.
const Source = "myriarch"

// Event types the adapters emit themselves (the engine emits the other
// constants of core/rollout): an engine error the state machine caught, and
// the planner's replacement of a rollout whose target changed.
const (
	TypeFailed     = rollout.EventFailed
	TypeSuperseded = rollout.EventSuperseded
)

// Event is one notification: the detail of the EventBridge event, an item
// of the API's feed and the body of a webhook call. EventID is stable: the
// same change of the same rollout always has the same id, so that consumers
// drop what at-least-once delivery brings twice.
type Event struct {
	EventID string    `json:"eventId"`
	Type    string    `json:"type"` // the internal name, e.g. rollout.paused
	Time    time.Time `json:"time"` // when the engine or the planner decided it
	Reason  string    `json:"reason,omitempty"`
	// Index is the event's place among the events of one change (one stored
	// version of the rollout), from 0.
	Index   int     `json:"index"`
	Rollout Summary `json:"rollout"`
}

// Summary is the rollout as the change that caused the event left it.
type Summary struct {
	ID string `json:"id"`
	// Version is the rollout's stored version after the change: the events
	// of one rollout are ordered by (version, index).
	Version      int64          `json:"version"`
	Fleet        string         `json:"fleet"`
	Kind         policy.Kind    `json:"kind"`
	Status       rollout.Status `json:"status"`
	StatusReason string         `json:"statusReason,omitempty"`
	ToRef        string         `json:"toRef"`
	Origin       rollout.Origin `json:"origin"`
	CreatedBy    string         `json:"createdBy,omitempty"`
	// Wave is the wave the rollout works on or waits for, and Stage the
	// stage (waves split by region or zone); absent when none is left.
	Wave  *Wave  `json:"wave,omitempty"`
	Stage string `json:"stage,omitempty"`
	// Counts are the rollout's targets by status, every status present, and
	// their total.
	Counts Counts `json:"counts"`
}

// Wave names a wave by its index and name.
type Wave struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// Counts are targets by status ("pending", "in_progress", ...) and "total".
type Counts map[string]int

// New makes the events of one change of rollout r into notifications: r
// and ts are the rollout and all its targets after the change, at the time
// it was decided. The ids are set when the change is stored (Stamp), since
// only the store knows the version it writes.
func New(r rollout.Rollout, ts []rollout.Target, es []engine.Event, at time.Time) []Event {
	if len(es) == 0 {
		return nil
	}
	sum := summarize(r, ts)
	out := make([]Event, len(es))
	for i, e := range es {
		out[i] = Event{Type: e.Type, Time: at.UTC(), Reason: e.Reason, Index: i, Rollout: sum}
		out[i].Rollout.Counts = sum.Counts.clone()
	}
	return out
}

func summarize(r rollout.Rollout, ts []rollout.Target) Summary {
	s := Summary{ID: r.ID, Version: r.Version, Fleet: r.Fleet, Kind: r.Kind, Status: r.Status, StatusReason: r.StatusReason,
		ToRef: r.ToRef, Origin: r.Origin, CreatedBy: r.CreatedBy, Counts: count(ts)}
	if w := r.CurrentWave(); w != nil {
		s.Wave = &Wave{Index: w.Index, Name: w.Name}
	}
	if st := r.CurrentStage(); st != nil {
		s.Stage = st.Name
	}
	return s
}

func count(ts []rollout.Target) Counts {
	c := Counts{"total": len(ts)}
	for _, s := range rollout.TargetStatuses {
		c[string(s)] = 0
	}
	for _, t := range ts {
		c[string(t.Status)]++
	}
	return c
}

func (c Counts) clone() Counts {
	out := make(Counts, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Stamp gives the events of one change the version the store writes:
// Rollout.Version, Index (their order) and EventID.
func Stamp(es []Event, version int64) {
	for i := range es {
		es[i].Index = i
		es[i].Rollout.Version = version
		es[i].EventID = ID(es[i].Rollout.ID, version, i)
	}
}

// ID is the stable id of the index-th event of the change that stored
// version of a rollout: <rollout id>:v<version>:<index>, for example
// r-20260302t120000-9f86d081:v7:0. A retried engine task finds nothing to
// change and writes nothing, so it can never produce an id twice; a pass
// that lost its race wrote nothing either.
func ID(rolloutID string, version int64, index int) string {
	return fmt.Sprintf("%s:v%d:%d", rolloutID, version, index)
}

// DetailType is the EventBridge detail-type of an event type: a phrase in
// title case, as AWS's own events have them ("Rollout Paused" for
// rollout.paused). A type the catalogue lacks gets one derived the same way.
func DetailType(typ string) string {
	if d, ok := detailTypes[typ]; ok {
		return d
	}
	words := strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// Entry is one entry of the catalogue.
type Entry struct {
	Type       string // as the engine or the planner emits it
	DetailType string // on EventBridge
	When       string // in a few words; docs/notifications.md says more
}

// Catalogue lists every event type, in the order a rollout meets them.
var Catalogue = []Entry{
	{rollout.EventStarted, "Rollout Started", "the first evaluation began the rollout"},
	{rollout.EventWaitingApproval, "Rollout Waiting For Approval", "a wave that requires approval is due"},
	{rollout.EventApproved, "Rollout Approved", "an operator approved a wave (one event per approval)"},
	{rollout.EventRejected, "Rollout Rejected", "an operator rejected a wave's approval; onFailure applies"},
	{rollout.EventApprovalExpired, "Rollout Approval Expired", "nobody approved a wave within approvals.expiry"},
	{rollout.EventStageStarted, "Rollout Stage Started", "a stage (waves by region or zone, or with gates) began"},
	{rollout.EventStagePassed, "Rollout Stage Passed", "a stage's targets succeeded and its bake and gate ended green"},
	{rollout.EventGateRed, "Rollout Gate Red", "a stage's or a batch's health gate turned red; onFailure follows"},
	{rollout.EventFrozen, "Rollout Frozen", "a freeze holds the next stage"},
	{rollout.EventUnfrozen, "Rollout Unfrozen", "the freeze that held a stage ended"},
	{rollout.EventFreezeOverride, "Rollout Freeze Override", "an operator bypassed the freezes for the rest of the rollout"},
	{rollout.EventPaused, "Rollout Paused", "the failure threshold (onFailure: pause) or an operator paused the rollout"},
	{rollout.EventResumed, "Rollout Resumed", "an operator resumed a paused rollout"},
	{rollout.EventRetried, "Rollout Retried", "an operator reset the failed targets to run them again (retry-failed)"},
	{rollout.EventRollingBack, "Rollout Rolling Back", "the failure threshold (onFailure: rollback) or an operator started a rollback"},
	{rollout.EventRolledBack, "Rollout Rolled Back", "every started target is back on its starting state"},
	{rollout.EventCompleted, "Rollout Completed", "every wave completed"},
	{rollout.EventFailed, "Rollout Failed", "the rollout cannot continue and waits for a person (engine error, executor, fleet gone, rollback timed out)"},
	{rollout.EventAborted, "Rollout Aborted", "an operator aborted the rollout"},
	{rollout.EventSuperseded, "Rollout Superseded", "the planner replaced the rollout: its target changed"},
}

var detailTypes = func() map[string]string {
	m := make(map[string]string, len(Catalogue))
	for _, k := range Catalogue {
		m[k.Type] = k.DetailType
	}
	return m
}()

// Envelope is an event as EventBridge carries it (the fields a rule
// matches on besides those EventBridge adds: account, region, id): the
// body of a webhook call too, so that a receiver written for EventBridge
// serves locally unchanged.
type Envelope struct {
	Source     string    `json:"source"`
	DetailType string    `json:"detail-type"`
	Time       time.Time `json:"time"`
	Detail     Event     `json:"detail"`
}

// Wrap puts an event in its envelope.
func Wrap(e Event) Envelope {
	return Envelope{Source: Source, DetailType: DetailType(e.Type), Time: e.Time, Detail: e}
}
