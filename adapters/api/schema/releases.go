package schema

import (
	"time"

	"github.com/myriarch/myriarch/core/installplan"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/selection"
)

// Release is the schema Release: one release of a distribution's catalogue.
type Release struct {
	Distribution   string          `json:"distribution"`
	Version        string          `json:"version"`
	Prerelease     bool            `json:"prerelease"`
	Latest         bool            `json:"latest"` // the newest release of the distribution that is not a prerelease
	PublishedAt    *time.Time      `json:"publishedAt,omitempty"`
	Platforms      []string        `json:"platforms"`
	Source         releases.Source `json:"source"`
	UpdatedAt      *time.Time      `json:"updatedAt,omitempty"`
	UpdatedBy      string          `json:"updatedBy,omitempty"` // display name of who wrote an admin entry
	UpdatedByActor string          `json:"updatedByActor,omitempty"`
}

// ReleaseDetail is the schema ReleaseDetail: a release and what it means
// for each fleet of its distribution.
type ReleaseDetail struct {
	Release
	UpdatableFleets []ReleaseFleetOption `json:"updatableFleets"`
}

// ReleaseFleetOption is the schema ReleaseFleetOption: a fleet of the
// release's distribution, its effective target, whether the release is
// selectable for it and, if not, why (the reason codes of the version
// options).
type ReleaseFleetOption struct {
	Fleet          string           `json:"fleet"`
	Target         selection.Target `json:"target"`
	Behind         bool             `json:"behind"` // the target is older than the release
	Selectable     bool             `json:"selectable"`
	ReasonCode     string           `json:"reasonCode,omitempty"`
	NotAllowedCode string           `json:"notAllowedCode,omitempty"`
}

// LatestReleaseFleets is the schema LatestReleaseFleets: the newest
// release of a distribution that is not a prerelease, and the fleets whose
// effective target is older.
type LatestReleaseFleets struct {
	Distribution string               `json:"distribution"`
	Latest       Release              `json:"latest"`
	Fleets       []ReleaseFleetOption `json:"fleets"`
}

// ReleaseSummary is the schema ReleaseSummary: outdated collectors per
// distribution of the fleets.
type ReleaseSummary struct {
	Distributions []DistributionSummary `json:"distributions"`
}

// DistributionSummary is one distribution of a ReleaseSummary.
type DistributionSummary struct {
	Distribution string          `json:"distribution"`
	Latest       string          `json:"latest,omitempty"` // absent: the catalogue knows no release that is not a prerelease
	Fleets       int             `json:"fleets"`
	FleetsBehind int             `json:"fleetsBehind"`
	Collectors   CollectorCounts `json:"collectors"`
	Versions     []VersionCount  `json:"versions"`
}

// CollectorCounts are the collectors of a distribution's fleets by how
// their reported version compares with the latest release.
type CollectorCounts struct {
	Total    int `json:"total"`
	OnLatest int `json:"onLatest"`
	Behind   int `json:"behind"`
	Ahead    int `json:"ahead"`
	Unknown  int `json:"unknown"` // no version reported, one that is no semantic version, or no latest release
}

// VersionCount is how many collectors report one version.
type VersionCount struct {
	Version    string `json:"version"`
	Collectors int    `json:"collectors"`
	Behind     bool   `json:"behind"`
}

// InstallPlan is the schema InstallPlan.
type InstallPlan = installplan.Plan
