package fleet

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Frame is spec.update.selection: whether an operator may choose the version
// of the fleet and which versions. The zero value is a missing block: disabled.
type Frame struct {
	Enabled        bool     `json:"enabled"`
	VersionRange   string   `json:"versionRange,omitempty"` // Masterminds semver v3 constraint over versions without v
	Versions       []string `json:"versions,omitempty"`     // alternative: an explicit list
	AllowDowngrade bool     `json:"allowDowngrade"`
	RequireReason  bool     `json:"requireReason"`
	RolloutPolicy  string   `json:"rolloutPolicy,omitempty"`
}

// Declares reports whether the frame names any version (a range or a list),
// whether or not it is enabled.
func (fr Frame) Declares() bool { return fr.VersionRange != "" || len(fr.Versions) > 0 }

// Contains reports whether version (normalized first) lies inside the frame.
// A range follows Masterminds: a prerelease satisfies it only when the range
// itself has a prerelease part. A list matches exactly. Enabled is not looked
// at: callers decide whether the frame applies. A frame that declares nothing,
// or whose range does not parse, contains nothing; one that (invalidly)
// declares both requires both, so an invalid frame never widens the choice.
func (fr Frame) Contains(version string) bool { return fr.contains(version, false) }

// ContainsIncludingPrereleases is Contains with a range that also admits
// prereleases. A prerelease that this admits and Contains refuses was turned
// away only for being a prerelease (reason prerelease_not_allowed).
func (fr Frame) ContainsIncludingPrereleases(version string) bool { return fr.contains(version, true) }

func (fr Frame) contains(version string, includePre bool) bool {
	if !fr.Declares() {
		return false
	}
	version = NormalizeVersion(version)
	if len(fr.Versions) > 0 && !fr.listed(version) {
		return false
	}
	if fr.VersionRange == "" {
		return true
	}
	c, err := semver.NewConstraint(fr.VersionRange)
	if err != nil {
		return false
	}
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return false
	}
	c.IncludePrerelease = includePre
	return c.Check(v)
}

func (fr Frame) listed(version string) bool {
	for _, v := range fr.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// String names the frame in messages and audit details:
// `versionRange ">=0.161.0, <=0.162.0"` or `versions [0.161.0, 0.162.0]`.
func (fr Frame) String() string {
	var parts []string
	if fr.VersionRange != "" {
		parts = append(parts, fmt.Sprintf("versionRange %q", fr.VersionRange))
	}
	if len(fr.Versions) > 0 {
		parts = append(parts, "versions ["+strings.Join(fr.Versions, ", ")+"]")
	}
	if len(parts) == 0 {
		return "no versions"
	}
	return strings.Join(parts, " and ")
}
