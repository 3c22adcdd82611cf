// Package fleet is the `kind: Fleet` object: which agents belong to a fleet,
// the configuration and collector version Git declares for them, the update
// executor, the policies its rollouts use and the frame inside which an
// operator may choose the version (docs/version-selection.md, "The
// frame"). Parse reads the YAML, Validate applies the rules; both return
// issues and never panic.
package fleet

import (
	"strings"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
)

// APIVersion and Kind of the YAML object.
const (
	APIVersion = "myriarch.dev/v1alpha1"
	ObjectKind = "Fleet"
)

// Executor is what carries out a version update on a host.
type Executor string

const (
	ExecutorNone    Executor = "none"
	ExecutorUpdater Executor = "updater"
	ExecutorWebhook Executor = "webhook"
	ExecutorAWX     Executor = "awx"
	ExecutorManual  Executor = "manual"
)

// Executors lists the valid executors in the order messages name them.
var Executors = []Executor{ExecutorNone, ExecutorUpdater, ExecutorWebhook, ExecutorAWX, ExecutorManual}

// Valid reports whether e is one of Executors.
func (e Executor) Valid() bool {
	for _, x := range Executors {
		if e == x {
			return true
		}
	}
	return false
}

// NeedsRef reports whether the executor is an executor object that the fleet
// names with update.executorRef (webhook, awx). updater and manual are built in.
func (e Executor) NeedsRef() bool { return e == ExecutorWebhook || e == ExecutorAWX }

// Fleet is a parsed Fleet object. Zero values mean "not set".
type Fleet struct {
	Name      string            `json:"name"`
	Collector Collector         `json:"collector"`
	Update    Update            `json:"update"`
	Rollout   RolloutPolicies   `json:"rollout"`
	Selector  selector.Selector `json:"selector"` // membership: an empty selector matches every agent
	Config    Config            `json:"config"`
}

// Collector is spec.collector. Version is the Git target, normalized (no
// leading v); empty means "not set".
type Collector struct {
	Distribution string `json:"distribution,omitempty"`
	Version      string `json:"version,omitempty"`
}

// Update is spec.update. Executor is none when the field is missing; use
// Fleet.UpdateExecutor, which also covers a Fleet built in code.
type Update struct {
	Executor    Executor `json:"executor"`
	ExecutorRef string   `json:"executorRef,omitempty"` // executor object, for webhook and awx
	Selection   Frame    `json:"selection"`             // a missing block is the zero Frame (disabled)
}

// RolloutPolicies is spec.rollout: the policy names per kind of rollout.
type RolloutPolicies struct {
	ConfigPolicy  string `json:"configPolicy,omitempty"`
	VersionPolicy string `json:"versionPolicy,omitempty"`
}

// Config is spec.config: the rendered configuration the fleet's agents get.
// Hash is the desired hash of that rendered configuration; the revision that
// carries the fleet fills it in (or the YAML states it). Empty means the
// fleet declares no configuration and no configuration rollout arises.
type Config struct {
	Hash string `json:"hash,omitempty"`
}

// NormalizeVersion trims one leading "v": the form in which every version is
// stored and compared ("v0.161.0" and "0.161.0" are the same release).
func NormalizeVersion(v string) string { return strings.TrimPrefix(v, "v") }

// GitTarget is spec.collector.version, normalized; empty means not set.
func (f Fleet) GitTarget() string { return NormalizeVersion(f.Collector.Version) }

// UpdateExecutor is spec.update.executor with its default none.
func (f Fleet) UpdateExecutor() Executor {
	if f.Update.Executor == "" {
		return ExecutorNone
	}
	return f.Update.Executor
}

// ConfigPolicyName is the policy for configuration rollouts: rollout.configPolicy,
// else "default" (which falls back to the built-in policy when it does not exist).
func (f Fleet) ConfigPolicyName() string { return orDefault(f.Rollout.ConfigPolicy) }

// VersionPolicyName is the policy for version rollouts from Git:
// rollout.versionPolicy, else "default".
func (f Fleet) VersionPolicyName() string { return orDefault(f.Rollout.VersionPolicy) }

// SelectionPolicyName is the policy for rollouts caused by a UI choice:
// update.selection.rolloutPolicy, else rollout.versionPolicy, else "default".
func (f Fleet) SelectionPolicyName() string {
	if f.Update.Selection.RolloutPolicy != "" {
		return f.Update.Selection.RolloutPolicy
	}
	return f.VersionPolicyName()
}

func orDefault(name string) string {
	if name == "" {
		return policy.DefaultName
	}
	return name
}
