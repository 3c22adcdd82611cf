package gate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MatchOp is the operator of a label matcher, as in Prometheus and
// Alertmanager.
type MatchOp string

const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// Matcher is one condition of alerts.blockOn on an alert's labels.
type Matcher struct {
	Label string
	Op    MatchOp
	Value string
	re    *regexp.Regexp // =~ and !~: Value anchored
}

// ParseMatcher reads key=value, key!=value, key=~regex or key!~regex. The
// value may be double-quoted (severity="critical"). A regex is anchored at
// both ends as in Prometheus: region=~eu-.* matches eu-west-1, not
// xeu-west-1.
func ParseMatcher(s string) (Matcher, error) {
	i := strings.IndexAny(s, "=!")
	if i < 0 {
		return Matcher{}, fmt.Errorf("matcher %q: want key=value, key!=value, key=~regex or key!~regex", s)
	}
	m := Matcher{Label: strings.TrimSpace(s[:i])}
	rest := s[i:]
	// The two-character operators first: "=~" also starts with "=".
	for _, op := range []MatchOp{MatchNotEqual, MatchNotRegexp, MatchRegexp, MatchEqual} {
		if v, ok := strings.CutPrefix(rest, string(op)); ok {
			m.Op, m.Value = op, strings.TrimSpace(v)
			break
		}
	}
	if m.Op == "" {
		return Matcher{}, fmt.Errorf("matcher %q: want key=value, key!=value, key=~regex or key!~regex", s)
	}
	if m.Label == "" || strings.ContainsAny(m.Label, " \t\"'{}") {
		return Matcher{}, fmt.Errorf("matcher %q: bad label name %q", s, m.Label)
	}
	if strings.HasPrefix(m.Value, `"`) {
		v, err := strconv.Unquote(m.Value)
		if err != nil {
			return Matcher{}, fmt.Errorf("matcher %q: value: %w", s, err)
		}
		m.Value = v
	}
	if m.Op == MatchRegexp || m.Op == MatchNotRegexp {
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return Matcher{}, fmt.Errorf("matcher %q: %w", s, err)
		}
		m.re = re
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

// stageScope lists the regions and zones of a stage's passes, each once and
// sorted. A pass that is not split holds several joined with "|".
func stageScope(passes []Pass) (regions, zones []string) {
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
