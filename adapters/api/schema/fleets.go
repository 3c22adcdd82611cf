package schema

import (
	"time"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/selection"
	"github.com/myriarch/myriarch/core/selector"
)

// Fleet is the schema FleetStatus.
type Fleet struct {
	Name           string            `json:"name"`
	Commit         string            `json:"commit"`
	Distribution   string            `json:"distribution,omitempty"`
	GitVersion     string            `json:"gitVersion,omitempty"`
	Executor       fleet.Executor    `json:"executor"`
	ConfigPolicy   string            `json:"configPolicy"`
	VersionPolicy  string            `json:"versionPolicy"`
	ConfigHash     string            `json:"configHash,omitempty"`
	Selector       selector.Selector `json:"selector"`
	Selection      fleet.Frame       `json:"selection"`
	VersionTarget  selection.Target  `json:"versionTarget"`
	UISelection    *FleetSelection   `json:"uiSelection,omitempty"`
	Agents         AgentCounts       `json:"agents"`
	ActiveRollouts []RolloutSummary  `json:"activeRollouts"`
}

// AgentCounts are the statistics of a fleet's agents (fleet.Counts).
type AgentCounts struct {
	Total            int `json:"total"`
	Online           int `json:"online"`
	OnTargetVersion  int `json:"onTargetVersion"`
	OnConfigHash     int `json:"onConfigHash"`
	Drifted          int `json:"drifted"`
	Gone             int `json:"gone"`
	AssignmentErrors int `json:"assignmentErrors"`
}

// FleetSelection is the schema FleetVersionSelection: an operator's choice,
// with the display name of who chose.
type FleetSelection struct {
	Version         string          `json:"version"`
	State           selection.State `json:"state"`
	StateReason     string          `json:"stateReason,omitempty"`
	GitVersion      string          `json:"gitVersion,omitempty"`
	GitCommit       string          `json:"gitCommit,omitempty"`
	SelectedBy      string          `json:"selectedBy"`
	SelectedByActor string          `json:"selectedByActor"`
	SelectedAt      time.Time       `json:"selectedAt"`
	Reason          string          `json:"reason,omitempty"`
	RolloutID       string          `json:"rolloutId,omitempty"`
	PlannedAt       *time.Time      `json:"plannedAt,omitempty"`
	UpdatedAt       time.Time       `json:"updatedAt"`
}

// VersionOptions is the schema FleetVersionOptions.
type VersionOptions struct {
	Allowed        bool                      `json:"allowed"`
	NotAllowedCode string                    `json:"notAllowedCode,omitempty"`
	Target         selection.Target          `json:"target"`
	Executor       fleet.Executor            `json:"executor"`
	VersionPolicy  string                    `json:"versionPolicy"`
	ActiveRollout  *RolloutSummary           `json:"activeRollout,omitempty"`
	Options        []selection.VersionOption `json:"options"`
	Platforms      []string                  `json:"platforms"`
}
