package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// ReleaseStore keeps the release catalogue: the administrators' and the
// published releases of each distribution (adapters/store/releases.go). A write
// states the revision it read; a lost race wraps rollout.ErrConflict.
// ReleasesOf and GetRelease return nothing for names no release can have.
type ReleaseStore interface {
	ReleasesOf(ctx context.Context, distribution string) ([]releases.Release, error) // newest first
	GetRelease(ctx context.Context, distribution, version string) (*releases.Release, error)
	PutRelease(ctx context.Context, r releases.Release, previousRevision int64) error
	DeleteRelease(ctx context.Context, distribution, version string, previousRevision int64) error
}

// TargetRelease is the audit target type of the catalogue's writes; the
// target id is <distribution>/<version>.
const TargetRelease = "release"

// Audit actions of the catalogue.
const (
	ActionReleasePut    = "release.put"
	ActionReleaseDelete = "release.delete"
)

// StoredCatalog is the release catalogue as its readers see it: the
// releases stored for the distribution with the configured ones merged in
// under them (source config). The configured releases are read on every
// call and never written, so that changing MYRIARCH_RELEASES takes effect
// with the next deployment and needs no migration, and an administrator's
// entry of the same version wins.
type StoredCatalog struct {
	Store      ReleaseStore
	Configured ReleaseCatalog // nil: none
}

var _ ReleaseCatalog = StoredCatalog{}

// Known is the catalogue of one distribution, newest first.
func (c StoredCatalog) Known(ctx context.Context, distribution string) ([]releases.Release, error) {
	stored, err := c.Store.ReleasesOf(ctx, distribution)
	if err != nil {
		return nil, err
	}
	var conf Releases
	if c.Configured != nil {
		if conf, err = c.Configured.Releases(ctx, distribution); err != nil {
			return nil, err
		}
	}
	return releases.Merge(distribution, stored, conf.Versions, conf.Platforms), nil
}

// Releases is the catalogue as the version options read it: the versions,
// and the union of the platforms of the releases.
func (c StoredCatalog) Releases(ctx context.Context, distribution string) (Releases, error) {
	rs, err := c.Known(ctx, distribution)
	if err != nil {
		return Releases{}, err
	}
	return Releases{Versions: releases.Versions(rs), Platforms: releases.Platforms(rs)}, nil
}

func (s *server) catalogue() StoredCatalog {
	return StoredCatalog{Store: s.Store, Configured: s.Catalog}
}

func releaseMissing(d, v string) *Problem {
	return problem(http.StatusNotFound, CodeReleaseNotFound, fmt.Sprintf("release %s of %s is not in the catalogue", v, d))
}

func (s *server) releaseView(r releases.Release, latest string) schema.Release {
	v := schema.Release{Distribution: r.Distribution, Version: r.Version, Prerelease: r.Prerelease, Latest: r.Version == latest,
		PublishedAt: utcPtr(r.PublishedAt), Platforms: append([]string{}, r.Platforms...), Source: r.Source, UpdatedAt: utcPtr(r.UpdatedAt)}
	if r.UpdatedBy != "" {
		v.UpdatedByActor, v.UpdatedBy = r.UpdatedBy, s.Names.DisplayName(r.UpdatedBy)
	}
	return v
}

func latestVersion(rs []releases.Release) string {
	l, _ := releases.Latest(rs)
	return l.Version
}

// listReleases pages the catalogue of one distribution, newest first by
// semantic version. The catalogue is small and read whole (see
// adapters/store/ACCESS_PATTERNS.md), so pages are offsets into it.
func (s *server) listReleases(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, pr := newQuery(r, "distribution", "limit", "pageToken")
	if pr != nil {
		return 0, nil, pr
	}
	d := q.get("distribution")
	if d == "" {
		return 0, nil, badRequest("distribution is required, e.g. ?distribution=otelcol-contrib")
	}
	limit, token, pr := q.page()
	if pr != nil {
		return 0, nil, pr
	}
	from, ok := decodeOffset(token)
	if !ok {
		return 0, nil, pageError(page.ErrBadToken)
	}
	out := page.Page[schema.Release]{Items: []schema.Release{}}
	if !releases.ValidDistribution(d) {
		return http.StatusOK, out, nil // like every filter that no object can match
	}
	rs, err := s.catalogue().Known(r.Context(), d)
	if err != nil {
		return 0, nil, err
	}
	latest := latestVersion(rs)
	for i := from; i < len(rs) && i < from+limit; i++ {
		out.Items = append(out.Items, s.releaseView(rs[i], latest))
	}
	if from+limit < len(rs) {
		out.Next = encodeOffset(from + limit)
	}
	return http.StatusOK, out, nil
}

// getRelease is a release and, for every fleet of its distribution, the
// fleet's effective target and whether the release is selectable for it
// (selection.Judge: the version options' rules and reason codes).
func (s *server) getRelease(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx, d, v := r.Context(), chi.URLParam(r, "distribution"), chi.URLParam(r, "version")
	rs, err := s.catalogue().Known(ctx, d)
	if err != nil {
		return 0, nil, err
	}
	rel, ok := releases.Find(rs, v)
	if !ok {
		return 0, nil, releaseMissing(d, v)
	}
	fleets, err := s.fleetsOf(ctx, d)
	if err != nil {
		return 0, nil, err
	}
	out := schema.ReleaseDetail{Release: s.releaseView(rel, latestVersion(rs)), UpdatableFleets: []schema.ReleaseFleetOption{}}
	for _, st := range fleets {
		out.UpdatableFleets = append(out.UpdatableFleets, fleetOption(st, rs, v))
	}
	return http.StatusOK, out, nil
}

// fleetsOf are the fleets of the applied revision whose
// spec.collector.distribution is d, by name, with what the version options
// need of each.
func (s *server) fleetsOf(ctx context.Context, d string) ([]fleetState, error) {
	all, commit, err := s.Store.Fleets(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var out []fleetState
	for i := range all {
		if all[i].Collector.Distribution != d {
			continue
		}
		st := fleetState{name: all[i].Name, fleet: &all[i], commit: commit, active: map[policy.Kind]rollout.Rollout{}}
		if err := s.loadFleetDetails(ctx, &st); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// fleetOption judges version for one fleet.
func fleetOption(st fleetState, known []releases.Release, version string) schema.ReleaseFleetOption {
	j := selection.Judge(selection.OptionsInput{Fleet: st.fleet, Selection: st.selection, Releases: releases.Versions(known),
		MemberVersions: st.memberVersions(), ActiveVersionRollout: st.activeVersion()}, version)
	return schema.ReleaseFleetOption{Fleet: st.name, Target: j.Target, Behind: olderThan(j.Target.Version, version),
		Selectable: j.Selectable, ReasonCode: j.ReasonCode, NotAllowedCode: j.NotAllowedCode}
}

// olderThan reports whether version v is a semantic version older than
// ref; false for no version (a fleet in hold is not behind: it has no
// target to be behind with).
func olderThan(v, ref string) bool {
	c, ok := releases.Compare(v, ref)
	return ok && c < 0
}

// getLatestReleaseFleets is the newest release of a distribution that is
// not a prerelease, and the fleets whose effective target is older.
func (s *server) getLatestReleaseFleets(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx, d := r.Context(), chi.URLParam(r, "distribution")
	rs, err := s.catalogue().Known(ctx, d)
	if err != nil {
		return 0, nil, err
	}
	latest, ok := releases.Latest(rs)
	if !ok {
		return 0, nil, problem(http.StatusNotFound, CodeReleaseNotFound,
			fmt.Sprintf("the catalogue knows no release of %s that is not a prerelease", d))
	}
	fleets, err := s.fleetsOf(ctx, d)
	if err != nil {
		return 0, nil, err
	}
	out := schema.LatestReleaseFleets{Distribution: d, Latest: s.releaseView(latest, latest.Version), Fleets: []schema.ReleaseFleetOption{}}
	for _, st := range fleets {
		if o := fleetOption(st, rs, latest.Version); o.Behind {
			out.Fleets = append(out.Fleets, o)
		}
	}
	return http.StatusOK, out, nil
}

// getReleaseSummary counts, per distribution that a fleet declares, the
// collectors on the latest release, behind it and ahead of it, by their
// reported version, and the fleets whose effective target is behind. The
// collectors are the members of each fleet (FleetAgents): one query per
// fleet, fine for the fleets of one installation.
func (s *server) getReleaseSummary(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx := r.Context()
	all, _, err := s.Store.Fleets(ctx)
	if err != nil {
		return 0, nil, err
	}
	byDist := map[string][]fleet.Fleet{}
	for _, f := range all {
		if d := f.Collector.Distribution; d != "" { // without a distribution there is no catalogue to compare with
			byDist[d] = append(byDist[d], f)
		}
	}
	out := schema.ReleaseSummary{Distributions: []schema.DistributionSummary{}}
	for _, d := range sortedKeys(byDist) {
		sum, err := s.distributionSummary(ctx, d, byDist[d])
		if err != nil {
			return 0, nil, err
		}
		out.Distributions = append(out.Distributions, sum)
	}
	return http.StatusOK, out, nil
}

func (s *server) distributionSummary(ctx context.Context, d string, fleets []fleet.Fleet) (schema.DistributionSummary, error) {
	sum := schema.DistributionSummary{Distribution: d, Fleets: len(fleets), Versions: []schema.VersionCount{}}
	rs, err := s.catalogue().Known(ctx, d)
	if err != nil {
		return sum, err
	}
	sum.Latest = latestVersion(rs)
	counts := map[string]int{}
	for i := range fleets {
		f := &fleets[i]
		sel, err := s.Store.Selection(ctx, f.Name)
		if err != nil {
			return sum, err
		}
		if t := selection.ResolveVersionTarget(f, selection.Reconciled(f, sel)); sum.Latest != "" && olderThan(t.Version, sum.Latest) {
			sum.FleetsBehind++
		}
		agents, err := s.Store.FleetAgents(ctx, f.Name)
		if err != nil {
			return sum, err
		}
		for _, a := range agents {
			sum.Collectors.Total++
			v := fleet.NormalizeVersion(a.ServiceVersion)
			if v != "" {
				counts[v]++
			}
			c, ok := releases.Compare(v, sum.Latest)
			switch {
			case !ok:
				sum.Collectors.Unknown++
			case c == 0:
				sum.Collectors.OnLatest++
			case c < 0:
				sum.Collectors.Behind++
			default:
				sum.Collectors.Ahead++
			}
		}
	}
	versions := make([]releases.Release, 0, len(counts))
	for v := range counts {
		versions = append(versions, releases.Release{Version: v})
	}
	releases.SortNewestFirst(versions) // versions that are not semantic versions last
	for _, v := range versions {
		sum.Versions = append(sum.Versions, schema.VersionCount{Version: v.Version, Collectors: counts[v.Version],
			Behind: sum.Latest != "" && olderThan(v.Version, sum.Latest)})
	}
	return sum, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// releaseInput is the body of putRelease (schema ReleaseInput).
type releaseInput struct {
	PublishedAt *time.Time `json:"publishedAt"`
	Platforms   []string   `json:"platforms"`
}

// maxPlatforms bounds the platforms of a release: the collector is built
// for about a dozen.
const maxPlatforms = 64

func (in releaseInput) check() *Problem {
	if len(in.Platforms) > maxPlatforms {
		return badRequest("platforms has %d entries, at most %d are allowed", len(in.Platforms), maxPlatforms)
	}
	for i, p := range in.Platforms {
		if !releases.ValidPlatform(p) {
			return badRequest("platforms[%d] %s is not os/arch, e.g. linux/amd64", i, shorten(p))
		}
	}
	return nil
}

// putRelease creates or updates an administrator's entry. Writing what is
// stored already changes nothing (200, audited with noop). An entry of the
// same version that the refresh wrote becomes the administrator's, and the
// refresh leaves it alone from then on.
func (s *server) putRelease(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	var in releaseInput
	if pr := decodeBody(r, &in, MaxBodyBytes, true); pr != nil {
		return 0, nil, pr
	}
	if pr := in.check(); pr != nil {
		return 0, nil, pr
	}
	ctx, d, v := r.Context(), chi.URLParam(r, "distribution"), chi.URLParam(r, "version")
	now := s.Clock().UTC()
	want := releases.Release{Distribution: d, Version: v, Prerelease: releases.IsPrerelease(v), PublishedAt: utcPtr(in.PublishedAt),
		Platforms: releases.NormalizePlatforms(in.Platforms), Source: releases.SourceAdmin, UpdatedAt: &now, UpdatedBy: p.Actor}
	details := map[string]any{"distribution": d, "version": v, "platforms": want.Platforms, "noop": false}
	if want.PublishedAt != nil {
		details["publishedAt"] = want.PublishedAt.Format(time.RFC3339)
	}
	for attempt := 0; attempt < selectAttempts; attempt++ {
		cur, err := s.Store.GetRelease(ctx, d, v)
		if err != nil {
			return 0, nil, err
		}
		details["created"], details["previousSource"] = cur == nil, ""
		stored, status := want, http.StatusCreated
		if cur != nil {
			details["previousSource"], status = string(cur.Source), http.StatusOK
		}
		if cur != nil && releases.SameContent(*cur, want) {
			details["noop"], stored = true, *cur
		} else {
			prev := int64(0)
			if cur != nil {
				prev = cur.Revision
			}
			err := s.Store.PutRelease(ctx, want, prev)
			if errors.Is(err, rollout.ErrConflict) {
				continue
			}
			if err != nil {
				return 0, nil, err
			}
		}
		s.audit(ctx, releaseEntry(p, now, ActionReleasePut, d, v, audit.ResultSuccess, details))
		rs, err := s.catalogue().Known(ctx, d)
		if err != nil {
			return 0, nil, err
		}
		return status, s.releaseView(stored, latestVersion(rs)), nil
	}
	return 0, nil, s.releaseRace(ctx, p, now, ActionReleasePut, d, v, details)
}

// deleteRelease deletes an administrator's or a published entry. A
// configured release (source config) cannot be deleted here: it comes back
// from the configuration on every read (409 release_configured). Deleting a
// stored entry that shadows a configured one shows the configured one
// again. A published release that is deleted returns with the next refresh
// while its publisher lists it.
func (s *server) deleteRelease(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx, d, v := r.Context(), chi.URLParam(r, "distribution"), chi.URLParam(r, "version")
	now := s.Clock().UTC()
	configured, err := s.configured(ctx, d, v)
	if err != nil {
		return 0, nil, err
	}
	details := map[string]any{"distribution": d, "version": v, "configured": configured}
	for attempt := 0; attempt < selectAttempts; attempt++ {
		cur, err := s.Store.GetRelease(ctx, d, v)
		if err != nil {
			return 0, nil, err
		}
		if cur == nil && !configured {
			return 0, nil, releaseMissing(d, v) // nothing whose history an entry would belong to
		}
		if cur == nil {
			pr := problem(http.StatusConflict, CodeReleaseConfigured, fmt.Sprintf(
				"release %s of %s comes from the configured releases (MYRIARCH_RELEASES); remove it there", v, d))
			details["code"], details["error"] = pr.Code, pr.Detail
			s.audit(ctx, releaseEntry(p, now, ActionReleaseDelete, d, v, audit.ResultFailure, details))
			return 0, nil, pr
		}
		details["source"] = string(cur.Source)
		err = s.Store.DeleteRelease(ctx, d, v, cur.Revision)
		if errors.Is(err, rollout.ErrConflict) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		s.audit(ctx, releaseEntry(p, now, ActionReleaseDelete, d, v, audit.ResultSuccess, details))
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, s.releaseRace(ctx, p, now, ActionReleaseDelete, d, v, details)
}

// configured reports whether version v is one of the configured releases.
func (s *server) configured(ctx context.Context, d, v string) (bool, error) {
	if s.Catalog == nil {
		return false, nil
	}
	conf, err := s.Catalog.Releases(ctx, d)
	if err != nil {
		return false, err
	}
	return slices.Contains(releases.Versions(releases.Merge(d, nil, conf.Versions, nil)), v), nil
}

// releaseRace answers a write that lost every attempt, audited as a
// refusal with the code conflict.
func (s *server) releaseRace(ctx context.Context, p Principal, now time.Time, action, d, v string, details map[string]any) *Problem {
	pr := problem(http.StatusConflict, CodeConflict, fmt.Sprintf("release %s of %s kept changing; read it again and retry", v, d))
	details["code"], details["error"] = pr.Code, pr.Detail
	s.audit(ctx, releaseEntry(p, now, action, d, v, audit.ResultFailure, details))
	return pr
}

func releaseEntry(p Principal, now time.Time, action, d, v, result string, details map[string]any) audit.Entry {
	return audit.Entry{At: now, Actor: p.Actor, Action: action, TargetType: TargetRelease, TargetID: d + "/" + v,
		Result: result, Details: details}
}
