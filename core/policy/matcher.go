package policy

import (
	"fmt"
	"regexp"
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

// Matcher is one condition of alerts.blockOn on an alert's labels; core/gate
// evaluates it.
type Matcher struct {
	Label string
	Op    MatchOp
	Value string
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
		if _, err := m.Regexp(); err != nil {
			return Matcher{}, fmt.Errorf("matcher %q: %w", s, err)
		}
	}
	return m, nil
}

// Regexp is the anchored expression of a =~ or !~ matcher.
func (m Matcher) Regexp() (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + m.Value + ")$")
}
