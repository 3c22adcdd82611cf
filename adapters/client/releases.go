package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// The release and install-plan shapes are those the API serves.
type (
	Release             = schema.Release
	ReleaseDetail       = schema.ReleaseDetail
	ReleaseFleetOption  = schema.ReleaseFleetOption
	LatestReleaseFleets = schema.LatestReleaseFleets
	ReleaseSummary      = schema.ReleaseSummary
	DistributionSummary = schema.DistributionSummary
	InstallPlan         = schema.InstallPlan
)

// ReleaseInput is the schema ReleaseInput: what an administrator says of a
// release besides its version.
type ReleaseInput struct {
	PublishedAt *time.Time `json:"publishedAt,omitempty"`
	Platforms   []string   `json:"platforms,omitempty"`
}

func releasePath(distribution, version string) string {
	return "/api/v1/releases/" + escape(distribution) + "/" + escape(version)
}

// ListReleases reads one page of a distribution's catalogue, newest first.
func (c *Client) ListReleases(ctx context.Context, distribution string, limit int, pageToken string) (Page[Release], error) {
	var p Page[Release]
	return p, c.get(ctx, "/api/v1/releases", pageQuery(url.Values{"distribution": {distribution}}, limit, pageToken), &p)
}

// AllReleases reads a distribution's whole catalogue, newest first.
func (c *Client) AllReleases(ctx context.Context, distribution string) ([]Release, error) {
	return All(ctx, 0, func(token string, size int) (Page[Release], error) {
		return c.ListReleases(ctx, distribution, size, token)
	})
}

// GetRelease reads a release with what it means for each fleet of its
// distribution.
func (c *Client) GetRelease(ctx context.Context, distribution, version string) (ReleaseDetail, error) {
	var r ReleaseDetail
	return r, c.get(ctx, releasePath(distribution, version), nil, &r)
}

// PutRelease creates or updates an administrator's entry.
func (c *Client) PutRelease(ctx context.Context, distribution, version string, in ReleaseInput) (Release, error) {
	var r Release
	return r, c.Do(ctx, http.MethodPut, releasePath(distribution, version), nil, in, &r)
}

// DeleteRelease deletes an administrator's or an imported entry.
func (c *Client) DeleteRelease(ctx context.Context, distribution, version string) error {
	return c.Do(ctx, http.MethodDelete, releasePath(distribution, version), nil, nil, nil)
}

// LatestReleaseFleets reads the latest release of a distribution and the
// fleets whose effective target is older.
func (c *Client) LatestReleaseFleets(ctx context.Context, distribution string) (LatestReleaseFleets, error) {
	var l LatestReleaseFleets
	return l, c.get(ctx, "/api/v1/releases/"+escape(distribution)+"/latest/fleets", nil, &l)
}

// ReleaseSummary reads the outdated collectors per distribution.
func (c *Client) ReleaseSummary(ctx context.Context) (ReleaseSummary, error) {
	var s ReleaseSummary
	return s, c.get(ctx, "/api/v1/releases/summary", nil, &s)
}

// InstallPlan reads the collector version a new host installs to join the
// fleet; a plan that is not ready says when to ask again.
func (c *Client) InstallPlan(ctx context.Context, fleet string) (InstallPlan, error) {
	var p InstallPlan
	return p, c.get(ctx, "/api/v1/fleets/"+escape(fleet)+"/install-plan", nil, &p)
}
