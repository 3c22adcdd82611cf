package schema

import (
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Agent is the schema Agent: one collector of the inventory as the
// operators see it (listAgents, getAgent).
type Agent struct {
	// ID is the OpAMP instance UID as the gateway stores it: the agent's
	// 16-byte instance_uid in UUID text form, lowercase.
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	HostName    string `json:"hostName,omitempty"`
	Fleet       string `json:"fleet,omitempty"`
	// AssignmentError says why the agent belongs to no fleet although
	// fleets select it.
	AssignmentError string            `json:"assignmentError,omitempty"`
	Attributes      map[string]string `json:"attributes"`
	Version         string            `json:"version,omitempty"`       // reported service.version
	TargetVersion   string            `json:"targetVersion,omitempty"` // the fleet's effective target version
	Config          AgentConfig       `json:"config"`
	Health          AgentHealth       `json:"health"`
	Online          bool              `json:"online"`
	Gone            bool              `json:"gone"`
	LastSeen        *time.Time        `json:"lastSeen,omitempty"`
	ConnectedAt     *time.Time        `json:"connectedAt,omitempty"`
}

// AgentConfig is the agent's remote configuration: what it should run and
// what it reports.
type AgentConfig struct {
	DesiredHash  string `json:"desiredHash,omitempty"`
	ReportedHash string `json:"reportedHash,omitempty"`
	// EffectiveHash identifies the configuration the collector reports
	// that it runs (agent.Agent.EffectiveHash); informational, compared to
	// nothing, since a supervisor merges its own pieces into it.
	EffectiveHash string `json:"effectiveHash,omitempty"`
	Status        string `json:"status,omitempty"` // APPLIED, APPLYING, FAILED; absent before a report
	Error         string `json:"error,omitempty"`
	// Drifted: a desired hash is set and the reported one differs (also
	// while a rollout has just sent the new one).
	Drifted bool `json:"drifted"`
}

// AgentHealth is the collector's last health report. Reported is false for
// an agent that does not declare the ReportsHealth capability (the opamp-go
// example agent): it sends no health, so Healthy says nothing, and rollouts
// judge it by its connection and its reports alone.
type AgentHealth struct {
	Reported   bool             `json:"reported"`
	Healthy    bool             `json:"healthy"`
	Status     string           `json:"status,omitempty"`
	LastError  string           `json:"lastError,omitempty"`
	Components *AgentComponents `json:"components,omitempty"` // absent when the agent reports no component tree
}

// AgentComponents summarizes the component tree: the number of components
// (the leaves), how many are unhealthy, and the first of their names.
type AgentComponents struct {
	Total          int      `json:"total"`
	UnhealthyCount int      `json:"unhealthyCount"`
	Unhealthy      []string `json:"unhealthy"`
}

// AgentDetail is the schema AgentDetail (getAgent): the agent with its
// current rollout targets.
type AgentDetail struct {
	Agent
	Targets []AgentTarget `json:"targets"`
	// Updater is, of a collector that takes no packages itself, the
	// myriarch-updater that installs its versions; absent when none names it.
	Updater *AgentLink `json:"updater,omitempty"`
	// Serves is, of a myriarch-updater, the collector it names
	// (myriarch.updater.collector); Known is false when no such agent is
	// in the inventory.
	Serves *AgentLink `json:"serves,omitempty"`
}

// AgentLink names the other end of an updater's link.
type AgentLink struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
	Online      bool   `json:"online"`
	Known       bool   `json:"known"`
}

// AgentTarget is the agent's last target of one kind, with its rollout's
// status.
type AgentTarget struct {
	RolloutID     string               `json:"rolloutId"`
	Kind          policy.Kind          `json:"kind"`
	Wave          int                  `json:"wave"`
	Status        rollout.TargetStatus `json:"status"`
	Reason        string               `json:"reason,omitempty"`
	ToRef         string               `json:"toRef"`
	RolloutStatus rollout.Status       `json:"rolloutStatus"`
	Active        bool                 `json:"active"` // the rollout has not reached a final status
}

// AgentCandidate is one of the agents that share a display name, in an
// agent_ambiguous problem: its id, to ask again by, and what tells it from
// the others.
type AgentCandidate struct {
	ID          string     `json:"id"`
	DisplayName string     `json:"displayName"`
	Fleet       string     `json:"fleet,omitempty"`
	Online      bool       `json:"online"`
	Gone        bool       `json:"gone"`
	LastSeen    *time.Time `json:"lastSeen,omitempty"`
	// DifferingAttributes are its values of the attributes whose values
	// differ among the candidates ("" for one it lacks), at most
	// MaxDifferingAttributes, by name.
	DifferingAttributes map[string]string `json:"differingAttributes,omitempty"`
}

// State is online, offline or gone, as the inventory shows it.
func (c AgentCandidate) State() string { return agentState(c.Online, c.Gone) }

// State is online, offline or gone, as the inventory shows it.
func (a Agent) State() string { return agentState(a.Online, a.Gone) }

func agentState(online, gone bool) string {
	switch {
	case gone:
		return "gone"
	case online:
		return "online"
	}
	return "offline"
}

// MaxCandidates bounds the agents an agent_ambiguous lists.
const MaxCandidates = 10

// MaxDifferingAttributes bounds the attributes a candidate shows.
const MaxDifferingAttributes = 5
