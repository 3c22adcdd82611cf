package selection

import (
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/myriarch/myriarch/core/fleet"
)

// parse reads a strict semantic version after trimming a leading v, the
// form in which releases and reported versions may arrive.
func parse(v string) (*semver.Version, bool) {
	sv, err := semver.StrictNewVersion(fleet.NormalizeVersion(v))
	return sv, err == nil
}

func isPrerelease(v string) bool {
	sv, ok := parse(v)
	return ok && sv.Prerelease() != ""
}

// below reports whether v is lower than ref; false when either is not a
// semantic version (nothing to compare, so nothing to refuse).
func below(v, ref string) bool {
	a, ok1 := parse(v)
	b, ok2 := parse(ref)
	return ok1 && ok2 && a.LessThan(b)
}

// highest is the highest semantic version of versions, normalized; "" when
// none parses.
func highest(versions []string) string {
	var best *semver.Version
	out := ""
	for _, v := range versions {
		if sv, ok := parse(v); ok && (best == nil || sv.GreaterThan(best)) {
			best, out = sv, fleet.NormalizeVersion(v)
		}
	}
	return out
}

// sortNewestFirst orders semantic versions from newest to oldest; strings that
// are not semantic versions follow, in lexical order.
func sortNewestFirst(vs []string) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, okA := parse(vs[i])
		b, okB := parse(vs[j])
		switch {
		case okA && okB:
			return a.GreaterThan(b)
		case okA != okB:
			return okA
		}
		return vs[i] < vs[j]
	})
}
