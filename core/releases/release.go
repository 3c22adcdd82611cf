// Package releases is the catalogue of collector releases, one per
// distribution (otelcol, otelcol-contrib, a custom build, ...): what a
// release is, how versions are ordered, how the stored catalogue and the
// configured releases merge into the one the version options read, and the
// refresh of a distribution from the releases its publisher lists on
// GitHub. Nothing here stores or reads a clock: the store and the callers do
// (adapters/store keeps the items, adapters/api serves them, functions/releases runs
// the refresh on a schedule).
package releases

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Source says where a release of the catalogue comes from.
type Source string

const (
	// SourceAdmin: written by an administrator through the API. The refresh
	// never overwrites or deletes it.
	SourceAdmin Source = "admin"
	// SourceConfig: one of the configured releases (MYRIARCH_RELEASES). It is
	// not stored: the catalogue merges it in on every read, under any stored
	// entry of the same version.
	SourceConfig Source = "config"
	// SourcePublished: imported from the releases the publisher lists.
	SourcePublished Source = "published"
)

// Release is one release of a distribution.
type Release struct {
	Distribution string     `json:"distribution"`
	Version      string     `json:"version"` // a strict semantic version without "v"
	Prerelease   bool       `json:"prerelease"`
	PublishedAt  *time.Time `json:"publishedAt,omitempty"`
	Platforms    []string   `json:"platforms,omitempty"` // os/arch, sorted, e.g. linux/amd64
	Source       Source     `json:"source"`
	UpdatedAt    *time.Time `json:"updatedAt,omitempty"` // when the catalogue last wrote it; nil for config
	UpdatedBy    string     `json:"updatedBy,omitempty"` // actor reference of an admin write

	// Revision is the optimistic-concurrency counter of the stored item: 0
	// for a release that is not stored (a configured one). A write states the
	// revision it read; the store keeps it as an attribute, not in the JSON.
	Revision int64 `json:"-"`
}

// Key names a release in messages and audit entries: <distribution>/<version>.
func (r Release) Key() string { return r.Distribution + "/" + r.Version }

// SameContent reports whether a and b say the same about the release:
// distribution, version, prerelease, publishedAt, platforms and source.
// Who wrote it and when do not count, so that writing the same again is a
// no-op.
func SameContent(a, b Release) bool {
	return a.Distribution == b.Distribution && a.Version == b.Version && a.Prerelease == b.Prerelease &&
		a.Source == b.Source && sameTime(a.PublishedAt, b.PublishedAt) && slices.Equal(a.Platforms, b.Platforms)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// MaxDistributionLength and MaxVersionLength bound the keys of a stored
// release (partition key release#<distribution>, sort key the version) far
// below DynamoDB's limits and keep messages readable.
const (
	MaxDistributionLength = 100
	MaxVersionLength      = 128
)

// distributionPattern: lowercase letters, digits, '.', '_' and '-', starting
// and ending with a letter or digit. It leaves out '#' and '/', which
// separate the parts of store keys and audit ids.
var distributionPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)

// ValidDistribution reports whether s can name a distribution of the
// catalogue: otelcol-contrib, otelcol-k8s, acme-otelcol_v2 ...
func ValidDistribution(s string) bool {
	return len(s) <= MaxDistributionLength && distributionPattern.MatchString(s)
}

// ValidVersion reports whether v is a strict semantic version without a
// leading "v", the only form in which the catalogue names a release.
func ValidVersion(v string) bool {
	_, ok := parse(v)
	return ok
}

func parse(v string) (*semver.Version, bool) {
	if len(v) > MaxVersionLength || strings.HasPrefix(v, "v") {
		return nil, false
	}
	sv, err := semver.StrictNewVersion(v)
	return sv, err == nil
}

// IsPrerelease reports whether the version has a prerelease part
// (0.162.0-rc.1). The catalogue's prerelease flag is exactly this: the
// frames of fleets and the version options judge by the version, so a flag
// of its own could only contradict them.
func IsPrerelease(v string) bool {
	sv, ok := parse(v)
	return ok && sv.Prerelease() != ""
}

// VersionOfTag turns a release tag into a version: one leading "v" is
// trimmed (v0.161.0 and 0.161.0 are the same release). A tag that is not a
// strict semantic version then is no release of a collector: the
// opentelemetry-collector-releases repository also tags its tools
// (cmd/builder/v0.161.0, cmd/opampsupervisor/v0.161.0).
func VersionOfTag(tag string) (string, bool) {
	v := strings.TrimPrefix(tag, "v")
	return v, ValidVersion(v)
}

// platformPattern is os/arch as Go and the release archives spell them:
// linux/amd64, windows/386, linux/armv7.
var platformPattern = regexp.MustCompile(`^[a-z0-9]+/[a-z0-9_]+$`)

// ValidPlatform reports whether p is os/arch.
func ValidPlatform(p string) bool { return len(p) <= 64 && platformPattern.MatchString(p) }

// NormalizePlatforms sorts and deduplicates platforms; nil stays nil, so
// that a release without platforms has none in its JSON.
func NormalizePlatforms(ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	out := slices.Clone(ps)
	sort.Strings(out)
	return slices.Compact(out)
}

// SortNewestFirst orders releases from the newest version to the oldest
// (semantic version precedence: 0.162.0 > 0.162.0-rc.1 > 0.161.0 > 0.99.0).
// Versions are valid by construction; one that is not sorts last.
func SortNewestFirst(rs []Release) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, okA := parse(rs[i].Version)
		b, okB := parse(rs[j].Version)
		switch {
		case okA && okB:
			return a.GreaterThan(b)
		case okA != okB:
			return okA
		}
		return rs[i].Version < rs[j].Version
	})
}

// Latest is the newest release that is not a prerelease; false when there
// is none.
func Latest(rs []Release) (Release, bool) {
	var best Release
	var bestV *semver.Version
	for _, r := range rs {
		v, ok := parse(r.Version)
		if !ok || r.Prerelease || v.Prerelease() != "" {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = r, v
		}
	}
	return best, bestV != nil
}

// Compare compares two versions: -1 when a is older than b, 0 when equal,
// 1 when newer; ok is false when either is not a strict semantic version
// (a leading "v" is trimmed first, as collectors may report one).
func Compare(a, b string) (cmp int, ok bool) {
	va, okA := parse(strings.TrimPrefix(a, "v"))
	vb, okB := parse(strings.TrimPrefix(b, "v"))
	if !okA || !okB {
		return 0, false
	}
	return va.Compare(vb), true
}

// Merge is the catalogue of one distribution as its readers see it: every
// stored release, and every configured version that is not stored, as a
// release with source config and the configured platforms. Configured
// versions are normalized (a leading "v" trimmed); one that is then not a
// strict semantic version is left out, since no release can have it. The
// result is newest first.
//
// Example: stored 0.162.0 (published), configured "v0.161.0, 0.162.0,
// latest" → 0.162.0 (published), 0.161.0 (config).
func Merge(distribution string, stored []Release, configured, platforms []string) []Release {
	out := slices.Clone(stored)
	have := map[string]bool{}
	for _, r := range stored {
		have[r.Version] = true
	}
	platforms = NormalizePlatforms(platforms)
	for _, v := range configured {
		v = strings.TrimPrefix(strings.TrimSpace(v), "v")
		if have[v] || !ValidVersion(v) {
			continue
		}
		have[v] = true
		out = append(out, Release{Distribution: distribution, Version: v, Prerelease: IsPrerelease(v),
			Platforms: slices.Clone(platforms), Source: SourceConfig})
	}
	SortNewestFirst(out)
	return out
}

// Find is the release of the version in rs, if any.
func Find(rs []Release, version string) (Release, bool) {
	for _, r := range rs {
		if r.Version == version {
			return r, true
		}
	}
	return Release{}, false
}

// Versions lists the versions of rs in their order.
func Versions(rs []Release) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

// Platforms is the union of the platforms of rs, sorted.
func Platforms(rs []Release) []string {
	var all []string
	for _, r := range rs {
		all = append(all, r.Platforms...)
	}
	if out := NormalizePlatforms(all); out != nil {
		return out
	}
	return []string{}
}

// Check reports why r cannot be stored, nil when it can: the store calls it
// before every write, so that no caller can store a release that a reader
// would have to guess about.
func Check(r Release) error {
	switch {
	case !ValidDistribution(r.Distribution):
		return fmt.Errorf("release %s: the distribution %q is not a valid name", r.Key(), r.Distribution)
	case !ValidVersion(r.Version):
		return fmt.Errorf("release %s: the version %q is not a semantic version without \"v\"", r.Key(), r.Version)
	case r.Prerelease != IsPrerelease(r.Version):
		return fmt.Errorf("release %s: prerelease is %v, but the version says %v", r.Key(), r.Prerelease, IsPrerelease(r.Version))
	case r.Source != SourceAdmin && r.Source != SourcePublished:
		return fmt.Errorf("release %s: source %q cannot be stored (admin or published)", r.Key(), r.Source)
	}
	for _, p := range r.Platforms {
		if !ValidPlatform(p) {
			return fmt.Errorf("release %s: platform %q is not os/arch", r.Key(), p)
		}
	}
	return nil
}
