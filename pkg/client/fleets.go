package client

import (
	"context"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/selection"
	"github.com/myriarch/myriarch/pkg/selector"
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

// AgentCounts are the members of a fleet.
type AgentCounts struct {
	Total           int `json:"total"`
	Online          int `json:"online"`
	OnTargetVersion int `json:"onTargetVersion"`
	OnConfigHash    int `json:"onConfigHash"`
}

// FleetSelection is the schema FleetVersionSelection: an operator's choice.
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

// SelectRequest is the schema SelectFleetVersionRequest.
// ExpectedTargetVersion nil is "not given"; "" means "no target".
type SelectRequest struct {
	Version               string  `json:"version"`
	Reason                string  `json:"reason,omitempty"`
	ExpectedTargetVersion *string `json:"expectedTargetVersion,omitempty"`
}

// SelectResult is the schema SelectFleetVersionResponse.
type SelectResult struct {
	Target    selection.Target `json:"target"`
	Planned   bool             `json:"planned"`
	RolloutID string           `json:"rolloutId,omitempty"`
	Targets   int              `json:"targets"`
	Message   string           `json:"message"`
}

// ClearResult is the effective target after a choice was taken back.
type ClearResult struct {
	selection.Target
	PossibleDowngrade bool `json:"possibleDowngrade"`
}

// ListFleets reads one page of the fleets of the applied revision, by name.
func (c *Client) ListFleets(ctx context.Context, limit int, pageToken string) (Page[Fleet], error) {
	var p Page[Fleet]
	return p, c.get(ctx, "/api/v1/fleets", pageQuery(nil, limit, pageToken), &p)
}

// AllFleets reads every fleet.
func (c *Client) AllFleets(ctx context.Context) ([]Fleet, error) {
	return All(ctx, 0, func(token string, size int) (Page[Fleet], error) { return c.ListFleets(ctx, size, token) })
}

// GetFleet reads a fleet with its effective target version.
func (c *Client) GetFleet(ctx context.Context, name string) (Fleet, error) {
	var f Fleet
	return f, c.get(ctx, "/api/v1/fleets/"+escape(name), nil, &f)
}

// VersionOptions reads the versions an operator may choose for a fleet.
func (c *Client) VersionOptions(ctx context.Context, name string) (VersionOptions, error) {
	var o VersionOptions
	return o, c.get(ctx, "/api/v1/fleets/"+escape(name)+"/version-options", nil, &o)
}

// SelectVersion chooses a fleet's target version; the API waits up to 10
// seconds for the planner.
func (c *Client) SelectVersion(ctx context.Context, name string, req SelectRequest) (SelectResult, error) {
	var r SelectResult
	return r, c.Do(ctx, http.MethodPost, "/api/v1/fleets/"+escape(name)+"/actions/select-version", nil, req, &r)
}

// ClearVersionSelection takes an operator's choice back; reason may be "".
func (c *Client) ClearVersionSelection(ctx context.Context, name, reason string) (ClearResult, error) {
	var r ClearResult
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return r, c.Do(ctx, http.MethodPost, "/api/v1/fleets/"+escape(name)+"/actions/clear-version-selection", nil, body, &r)
}
