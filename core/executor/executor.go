// Package executor starts and cancels the version update of one target. The
// end of an update is always the version the collector reports; an executor
// never reports success. Built in: manual and updater; webhook and AWX are
// executor objects that implement the same interface.
package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// Names of the built-in executors.
const (
	Manual  = "manual"
	Updater = "updater"
)

// Operations of a call.
const (
	OpStart  = "start"  // the target's update to the rollout's version
	OpReset  = "reset"  // a rollback: the update back to the target's from version
	OpCancel = "cancel" // a started update withdrawn (abort, supersede)
)

// Call is one call of an executor for one target.
type Call struct {
	Rollout rollout.Rollout
	Target  rollout.Target
	// Agent is the target's agent as last recorded (its display name, host
	// and attributes); the zero Agent when it is not known (a cancel of a
	// superseded rollout, a deleted agent).
	Agent     agent.Agent
	Version   string // the version to install: toRef for start, fromRef for reset
	Operation string // OpStart, OpReset or OpCancel
}

// Executor starts and cancels version updates.
//
// Start is at-least-once: Step Functions retries the task that calls it, so
// an executor must tolerate a second Start of the same target and attempt.
type Executor interface {
	// Validate reports a misconfiguration before any target starts.
	Validate(ctx context.Context, r rollout.Rollout) error
	// Start asks for c.Version on the target's host and returns an
	// external reference (a job id, "manual", ...).
	Start(ctx context.Context, c Call) (externalRef string, err error)
	// Cancel withdraws a started update where the executor can.
	Cancel(ctx context.Context, c Call) error
}

// Watcher is an executor whose started updates can fail on its side (an AWX
// job that fails): the engine asks it about targets in progress, and a
// failed update fails the target with the reason. Success is never its to
// say: that is the version the collector reports.
type Watcher interface {
	Failed(ctx context.Context, c Call) (reason string, failed bool, err error)
}

// ManualExecutor tracks versions changed outside Myriarch: Start marks the
// target started with the external reference "manual" and calls nothing.
type ManualExecutor struct{}

var _ Executor = ManualExecutor{}

func (ManualExecutor) Validate(context.Context, rollout.Rollout) error { return nil }

func (ManualExecutor) Start(context.Context, Call) (string, error) { return Manual, nil }

func (ManualExecutor) Cancel(context.Context, Call) error { return nil }

// Offers records the package offer that the gateway sends to the agent,
// named by its key (agent.OfferKey: the version, and the attempt of a retry).
type Offers interface {
	SetPackageOffer(ctx context.Context, agentID, offerKey string) error
}

// UpdaterExecutor drives the myriarch-updater: Start records a package offer
// for the target version, which the gateway sends as PackagesAvailable.
// Cancel withdraws an offer the agent has not taken yet.
type UpdaterExecutor struct {
	Offers Offers
	// Updaters finds the updaters linked to collectors; nil offers to every
	// target without looking (the collector is taken to install its own).
	Updaters LinkedUpdaters
}

var _ Executor = UpdaterExecutor{}

func (u UpdaterExecutor) Validate(context.Context, rollout.Rollout) error {
	if u.Offers == nil {
		return fmt.Errorf("updater executor: no offer store configured")
	}
	return nil
}

func (u UpdaterExecutor) Start(ctx context.Context, c Call) (string, error) {
	if err := u.linked(ctx, c); err != nil {
		return "", err
	}
	if err := u.Offers.SetPackageOffer(ctx, c.Target.AgentID, agent.OfferKey(c.Version, c.Target.Attempt)); err != nil {
		return "", fmt.Errorf("offer %s to agent %s: %w", c.Version, c.Target.AgentID, err)
	}
	return Updater, nil
}

// linked checks that someone takes the target's offer: the collector itself
// (it declares AcceptsPackages) or a myriarch-updater linked to it. Without
// either the target fails at once, rather than after applyTimeout with an
// offer nobody reads.
func (u UpdaterExecutor) linked(ctx context.Context, c Call) error {
	if u.Updaters == nil || c.Agent.InstallsOwnPackages() {
		return nil
	}
	found, err := u.Updaters.LinkedUpdaters(ctx, []string{c.Target.AgentID})
	if err != nil {
		return fmt.Errorf("find the updater of agent %s: %w", c.Target.AgentID, err)
	}
	if _, ok := found[c.Target.AgentID]; !ok {
		return fmt.Errorf("%w: agent %s (%s) takes no packages itself and no myriarch-updater names it (attribute %s = %s)",
			ErrNoUpdater, c.Agent.DisplayName(), c.Target.AgentID, agent.AttrLinkedCollector, c.Target.AgentID)
	}
	return nil
}

// ErrNoUpdater is a version target whose collector nobody updates.
var ErrNoUpdater = errors.New("no updater")

// LinkedUpdaters finds the myriarch-updater of each collector id.
type LinkedUpdaters interface {
	LinkedUpdaters(ctx context.Context, collectorIDs []string) (map[string]agent.Agent, error)
}

func (u UpdaterExecutor) Cancel(ctx context.Context, c Call) error {
	return u.Offers.SetPackageOffer(ctx, c.Target.AgentID, "")
}

// Registry resolves a rollout's executor by name.
type Registry map[string]Executor

// For returns the executor of a rollout, or an error naming the unknown one.
func (reg Registry) For(name string) (Executor, error) {
	if e, ok := reg[name]; ok {
		return e, nil
	}
	known := make([]string, 0, len(reg))
	for n := range reg {
		known = append(known, n)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("executor %q is not available (known: %s)", name, strings.Join(known, ", "))
}

// Secrets reads the secrets executor objects name (a webhook's signing
// secret, an AWX token): AWS Secrets Manager in the cloud, a directory or
// the environment locally. A secret is never in Git.
type Secrets interface {
	Secret(ctx context.Context, name string) (string, error)
}
