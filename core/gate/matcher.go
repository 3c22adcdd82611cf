package gate

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/policy"
)

// Matcher is one condition of alerts.blockOn (policy.Matcher), with its
// regular expression compiled once.
type Matcher struct {
	policy.Matcher
	re *regexp.Regexp // =~ and !~: Value anchored
}

// Operators of a matcher, as in Prometheus and Alertmanager.
const (
	MatchEqual     = policy.MatchEqual
	MatchNotEqual  = policy.MatchNotEqual
	MatchRegexp    = policy.MatchRegexp
	MatchNotRegexp = policy.MatchNotRegexp
)

// ParseMatcher reads one condition (policy.ParseMatcher) and compiles it.
func ParseMatcher(s string) (Matcher, error) {
	pm, err := policy.ParseMatcher(s)
	if err != nil {
		return Matcher{}, err
	}
	m := Matcher{Matcher: pm}
	if m.Op == MatchRegexp || m.Op == MatchNotRegexp {
		m.re, _ = pm.Regexp() // ParseMatcher compiled it already
	}
	return m, nil
}

// ParseMatchers parses every condition of alerts.blockOn.
func ParseMatchers(list []string) ([]Matcher, error) {
	ms := make([]Matcher, 0, len(list))
	for _, s := range list {
		m, err := ParseMatcher(s)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// Matches reports whether the labels satisfy the matcher. A missing label
// has the empty value, as in Prometheus: severity!=critical matches an alert
// without severity, severity=critical does not.
func (m Matcher) Matches(labels map[string]string) bool {
	v := labels[m.Label]
	switch m.Op {
	case MatchEqual:
		return v == m.Value
	case MatchNotEqual:
		return v != m.Value
	case MatchRegexp:
		return m.re.MatchString(v)
	case MatchNotRegexp:
		return !m.re.MatchString(v)
	}
	return false
}

func (m Matcher) String() string { return m.Label + string(m.Op) + strconv.Quote(m.Value) }

// The labels by which an alert says what it concerns: the words of the
// metric templates ({fleet}, {region}, {zone}). Only these three are read,
// not cloud_region or cloud_availability_zone as well, so that an alert has
// one meaning; alert rules that carry other names relabel them.
const (
	labelFleet  = "fleet"
	labelRegion = "region"
	labelZone   = "zone"
)

// ConcernsStage reports whether an active alert blocks the stage: it
// matches every blockOn matcher, and its fleet, region and zone labels, when
// present, name the stage's fleet, one of its regions and one of its zones.
// A label the alert lacks concerns everything (an alert without region
// blocks every region); an empty fleet, regions or zones means any.
func ConcernsStage(labels map[string]string, blockOn []Matcher, fleet string, regions, zones []string) bool {
	for _, m := range blockOn {
		if !m.Matches(labels) {
			return false
		}
	}
	var fleets []string
	if fleet != "" {
		fleets = []string{fleet}
	}
	return concerns(labels, labelFleet, fleets) &&
		concerns(labels, labelRegion, regions) &&
		concerns(labels, labelZone, zones)
}

// concerns: the label is missing or empty, any value is allowed, or the
// label's value is one of those allowed.
func concerns(labels map[string]string, label string, allowed []string) bool {
	v := labels[label]
	return v == "" || len(allowed) == 0 || slices.Contains(allowed, v)
}

// StageScope lists the regions and zones of a stage's passes, each once and
// sorted. A pass that is not split holds several joined with "|".
func StageScope(passes []Pass) (regions, zones []string) {
	for _, p := range passes {
		regions = appendSplit(regions, p.Region)
		zones = appendSplit(zones, p.Zone)
	}
	slices.Sort(regions)
	slices.Sort(zones)
	return slices.Compact(regions), slices.Compact(zones)
}

func appendSplit(list []string, joined string) []string {
	for _, s := range strings.Split(joined, "|") {
		if s != "" {
			list = append(list, s)
		}
	}
	return list
}
