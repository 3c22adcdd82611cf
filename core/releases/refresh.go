package releases

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

// CollectorReleases is the repository that publishes the OpenTelemetry
// Collector distributions, tagged v0.161.0 and so on.
const CollectorReleases = "open-telemetry/opentelemetry-collector-releases"

// knownRepositories are the distributions whose publisher needs no naming.
var knownRepositories = map[string]string{
	"otelcol":         CollectorReleases,
	"otelcol-contrib": CollectorReleases,
	"otelcol-k8s":     CollectorReleases,
	"otelcol-otlp":    CollectorReleases,
}

// Target is a distribution to refresh and the GitHub repository (owner/name)
// that publishes it.
type Target struct {
	Distribution string `json:"distribution"`
	Repository   string `json:"repository"`
}

// ParseTargets reads the refresh setting: comma-separated distributions,
// each optionally =owner/name when its publisher is not
// open-telemetry/opentelemetry-collector-releases. Empty is no refresh.
//
// Example: "otelcol-contrib, acme-otelcol=acme/otelcol-releases".
func ParseTargets(s string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		dist, repo, named := strings.Cut(part, "=")
		dist, repo = strings.TrimSpace(dist), strings.TrimSpace(repo)
		switch {
		case !ValidDistribution(dist):
			return nil, fmt.Errorf("release refresh: %q is not a distribution name (lowercase letters, digits, '.', '_', '-')", dist)
		case seen[dist]:
			return nil, fmt.Errorf("release refresh: %s is listed twice", dist)
		case named && !ValidRepository(repo):
			return nil, fmt.Errorf("release refresh: %q is not a GitHub repository owner/name", repo)
		case !named:
			if repo = knownRepositories[dist]; repo == "" {
				return nil, fmt.Errorf("release refresh: the publisher of %s is not known; name its repository: %s=owner/name", dist, dist)
			}
		}
		seen[dist] = true
		out = append(out, Target{Distribution: dist, Repository: repo})
	}
	return out, nil
}

// Change is one write of a refresh: the release as published, stored on
// the condition that the stored revision is still PreviousRevision (0: not
// stored).
type Change struct {
	Release          Release
	PreviousRevision int64
}

// Plan is what a refresh of one distribution does.
type Plan struct {
	Changes   []Change
	Unchanged int      // published, stored and the same
	KeptAdmin int      // published, but an administrator's entry holds the version
	Skipped   []string // tags that are no release of the distribution, with the reason
}

// PlanRefresh decides the refresh of one distribution from what its
// publisher lists and what the catalogue stores; now stamps the changes.
// A published release is
//
//	skipped   when it is a draft, its tag is no semantic version (v trimmed),
//	          the publisher marks it prerelease although its version has no
//	          prerelease part (the catalogue judges by the version, so the
//	          release waits until the publisher clears the mark), or it has
//	          assets and none of them is the distribution's
//	kept      when an administrator's entry holds the version
//	unchanged when the stored entry says the same
//	written   otherwise, with source published.
//
// Nothing is ever deleted: a release that disappears upstream stays known
// until an administrator deletes it, so that a listing cut short never
// removes releases fleets run.
func PlanRefresh(distribution string, published []Published, stored []Release, now time.Time) Plan {
	var p Plan
	byVersion := map[string]Release{}
	for _, r := range stored {
		byVersion[r.Version] = r
	}
	seen := map[string]bool{}
	for _, pub := range published {
		want, why := publishedRelease(distribution, pub, now)
		switch {
		case why == "" && seen[want.Version]:
			why = "the version is listed twice"
		case why == "":
			seen[want.Version] = true
		}
		if why != "" {
			p.Skipped = append(p.Skipped, pub.Tag+": "+why)
			continue
		}
		cur, ok := byVersion[want.Version]
		switch {
		case ok && cur.Source == SourceAdmin:
			p.KeptAdmin++
		case ok && SameContent(cur, want):
			p.Unchanged++
		default:
			p.Changes = append(p.Changes, Change{Release: want, PreviousRevision: cur.Revision})
		}
	}
	return p
}

// publishedRelease is the catalogue entry of a published release, or why
// there is none.
func publishedRelease(distribution string, pub Published, now time.Time) (Release, string) {
	v, ok := VersionOfTag(pub.Tag)
	switch {
	case pub.Draft:
		return Release{}, "a draft"
	case !ok:
		return Release{}, "not a semantic version"
	case pub.Prerelease && !IsPrerelease(v):
		return Release{}, "marked prerelease, but the version has no prerelease part"
	}
	platforms, ofDistribution := assetPlatforms(distribution, v, pub.Assets)
	if len(pub.Assets) > 0 && !ofDistribution {
		return Release{}, "no asset of " + distribution
	}
	at := now.UTC()
	r := Release{Distribution: distribution, Version: v, Prerelease: IsPrerelease(v), Platforms: platforms,
		Source: SourcePublished, UpdatedAt: &at}
	if pub.PublishedAt != nil {
		t := pub.PublishedAt.UTC()
		r.PublishedAt = &t
	}
	return r, ""
}

// archAliases are the names installer packages give architectures that the
// archives call by Go's names (otelcol-contrib_0.161.0_windows_x64.msi is
// windows/amd64).
var archAliases = map[string]string{"x64": "amd64", "x86_64": "amd64", "aarch64": "arm64"}

// assetPlatforms reads the platforms of a distribution from the asset names
// of a release of the collector releases repository, which are
// <distribution>_<version>_<os>_<arch>.<extension>:
//
//	otelcol-contrib_0.161.0_linux_amd64.tar.gz  → linux/amd64
//	otelcol-contrib_0.161.0_linux_arm64.rpm     → linux/arm64
//	otelcol-contrib_0.161.0_windows_x64.msi     → windows/amd64
//	otelcol_0.161.0_linux_amd64.tar.gz          → nothing for otelcol-contrib
//
// ofDistribution reports whether any asset belongs to the distribution
// (a release of a shared repository that predates a distribution has none).
func assetPlatforms(distribution, version string, assets []string) (platforms []string, ofDistribution bool) {
	prefix := distribution + "_" + version + "_"
	for _, a := range assets {
		rest, ok := strings.CutPrefix(a, prefix)
		if !ok {
			continue
		}
		ofDistribution = true
		name, _, _ := strings.Cut(rest, ".")
		os, arch, ok := strings.Cut(name, "_")
		if !ok {
			continue
		}
		if alias, ok := archAliases[arch]; ok {
			arch = alias
		}
		if p := os + "/" + arch; ValidPlatform(p) {
			platforms = append(platforms, p)
		}
	}
	return NormalizePlatforms(platforms), ofDistribution
}

// Lister lists the published releases of a repository (GitHub).
type Lister interface {
	Releases(ctx context.Context, repository string) ([]Published, error)
}

// Catalogue is what a refresh reads and writes of the stored catalogue
// (adapters/store). PutRelease refuses with an error wrapping rollout.ErrConflict
// when the stored revision is no longer previousRevision.
type Catalogue interface {
	ReleasesOf(ctx context.Context, distribution string) ([]Release, error)
	PutRelease(ctx context.Context, r Release, previousRevision int64) error
}

// Refresher refreshes distributions from their publishers.
type Refresher struct {
	Source Lister
	Store  Catalogue
	Clock  func() time.Time
	Log    *slog.Logger // nil: no logs
}

// Outcome is the refresh of one distribution.
type Outcome struct {
	Distribution string `json:"distribution"`
	Repository   string `json:"repository"`
	Listed       int    `json:"listed"`
	Written      int    `json:"written"`
	Unchanged    int    `json:"unchanged"`
	KeptAdmin    int    `json:"keptAdmin"`
	Skipped      int    `json:"skipped"`
	// Conflicts are writes that lost a race (an administrator, or another
	// refresh, wrote the release meanwhile); the next refresh decides again.
	Conflicts int    `json:"conflicts"`
	Error     string `json:"error,omitempty"`
}

// Result is one refresh run.
type Result struct {
	Distributions []Outcome `json:"distributions"`
}

// Refresh refreshes each target. A repository is listed once per run,
// however many distributions it publishes. A failure of one distribution
// does not stop the others; the error joins every failure, so that the
// function's error alarm fires.
func (r Refresher) Refresh(ctx context.Context, targets []Target) (Result, error) {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	listed := map[string][]Published{}
	listErr := map[string]error{}
	res := Result{Distributions: []Outcome{}}
	var errs []error
	for _, t := range targets {
		if _, done := listed[t.Repository]; !done {
			pubs, err := r.Source.Releases(ctx, t.Repository)
			listed[t.Repository], listErr[t.Repository] = pubs, err
		}
		o := Outcome{Distribution: t.Distribution, Repository: t.Repository}
		err := listErr[t.Repository]
		if err == nil {
			err = r.refresh(ctx, t, listed[t.Repository], &o)
		}
		if err != nil {
			o.Error = err.Error()
			errs = append(errs, fmt.Errorf("refresh %s: %w", t.Distribution, err))
		}
		log.InfoContext(ctx, "release refresh", "distribution", o.Distribution, "repository", o.Repository, "listed", o.Listed,
			"written", o.Written, "unchanged", o.Unchanged, "keptAdmin", o.KeptAdmin, "skipped", o.Skipped,
			"conflicts", o.Conflicts, "error", o.Error)
		res.Distributions = append(res.Distributions, o)
	}
	return res, errors.Join(errs...)
}

func (r Refresher) refresh(ctx context.Context, t Target, pubs []Published, o *Outcome) error {
	stored, err := r.Store.ReleasesOf(ctx, t.Distribution)
	if err != nil {
		return err
	}
	p := PlanRefresh(t.Distribution, pubs, stored, r.Clock())
	o.Listed, o.Unchanged, o.KeptAdmin, o.Skipped = len(pubs), p.Unchanged, p.KeptAdmin, len(p.Skipped)
	if len(p.Skipped) > 0 && r.Log != nil {
		r.Log.DebugContext(ctx, "release refresh: tags skipped", "distribution", t.Distribution, "tags", p.Skipped)
	}
	for _, c := range p.Changes {
		err := r.Store.PutRelease(ctx, c.Release, c.PreviousRevision)
		switch {
		case errors.Is(err, rollout.ErrConflict):
			o.Conflicts++
		case err != nil:
			return err
		default:
			o.Written++
		}
	}
	return nil
}
