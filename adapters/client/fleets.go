package client

import (
	"context"
	"net/http"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/selection"
)

// The fleet shapes are those the API serves (package schema).
type (
	Fleet          = schema.Fleet
	AgentCounts    = schema.AgentCounts
	FleetSelection = schema.FleetSelection
	VersionOptions = schema.VersionOptions
)

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
