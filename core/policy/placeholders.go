package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/myriarch/myriarch/core/issue"
)

// The placeholders of a gate's templates: the names the gate readers
// substitute (core/gate, Substitute), each where it has a value.
var (
	// StagePlaceholders have a value in the templates read once per pass of
	// a stage: metric queries, CloudWatch dimensions, alarm names and
	// prefixes.
	StagePlaceholders = []string{"fleet", "region", "zone", "wave", "stage"}
	// ProbePlaceholders have a value in a probe URL, read once per target:
	// the target's host, and the stage's fleet, wave and name. A target is
	// given no region or zone.
	ProbePlaceholders = []string{"host", "fleet", "wave", "stage"}
)

// placeholderPattern is a placeholder as a template writes it: a name in
// braces with nothing else inside. PromQL's own braces always hold an
// operator (metric{job="a"}, {__name__=~"x.*"}), CloudWatch's SEARCH schemas
// a slash or a comma ({AWS/EC2,InstanceId}), so neither is taken for one.
var placeholderPattern = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// unknownPlaceholders are the names of tmpl's placeholders that are not in
// known, each once, in the order they appear: a gate would read them
// literally ({az}, {regoin}), or as empty when the name has no value there
// ({host} in a metric).
func unknownPlaceholders(tmpl string, known []string) []string {
	var out []string
	for _, m := range placeholderPattern.FindAllStringSubmatch(tmpl, -1) {
		if name := m[1]; !slices.Contains(known, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// checkPlaceholders reports a placeholder_unknown error at path for each
// placeholder of tmpl that the field does not substitute. what names the
// field in the message ("metric error-rate"); hint, if any, ends it.
//
//	metric error-rate: unknown placeholder {az}; the placeholders are {fleet}, {region}, {zone}, {wave}, {stage}
func checkPlaceholders(l *issue.List, path, what, tmpl string, known []string, hint func(name string) string) {
	for _, name := range unknownPlaceholders(tmpl, known) {
		msg := fmt.Sprintf("%s: unknown placeholder {%s}; the placeholders are %s", what, name, braced(known))
		if elsewhere := placeholderElsewhere(name); elsewhere != "" {
			msg += " (" + elsewhere + ")"
		}
		if hint != nil {
			msg += hint(name)
		}
		l.Errorf(CodePlaceholderUnknown, path, "%s", msg)
	}
}

// placeholderElsewhere says where a placeholder that a field lacks has a
// value, so that {host} in a metric is not taken for a typo.
func placeholderElsewhere(name string) string {
	probe, stage := slices.Contains(ProbePlaceholders, name), slices.Contains(StagePlaceholders, name)
	switch {
	case probe && !stage:
		return fmt.Sprintf("{%s} has a value in probe URLs only, which are read once per target", name)
	case stage && !probe:
		return fmt.Sprintf("{%s} has a value in metrics and alarm names only, which are read once per pass; a probe's target has none", name)
	}
	return ""
}

// braced lists names as placeholders: {fleet}, {region}.
func braced(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "{" + n + "}"
	}
	return strings.Join(out, ", ")
}

// searchSchemaHint is for a CloudWatch metric-math query: a SEARCH schema
// of a namespace alone ({MyApp}) looks like a placeholder, and quoting the
// namespace keeps its meaning.
func searchSchemaHint(name string) string {
	return fmt.Sprintf(`; a SEARCH schema of a namespace alone is written with quotes: {"%s"}`, name)
}

// validatePlaceholders checks every template of a health gate.
func validatePlaceholders(l *issue.List, path string, h Health) {
	for i, p := range h.Probes {
		checkPlaceholders(l, fmt.Sprintf("%s.probes[%d].url", path, i), "probe url "+quote(p.URL), p.URL, ProbePlaceholders, nil)
	}
	for i, m := range h.Metrics {
		mp := fmt.Sprintf("%s.metrics[%d]", path, i)
		what := strings.TrimSpace("metric " + m.Name)
		var hint func(string) string
		if m.Provider == ProviderCloudWatch {
			hint = searchSchemaHint
		}
		checkPlaceholders(l, mp+".query", what, m.Query, StagePlaceholders, hint)
		if cw := m.CloudWatch; cw != nil {
			for _, dim := range sortedKeys(cw.Dimensions) {
				checkPlaceholders(l, issue.Child(mp+".cloudwatch.dimensions", dim), what+", dimension "+dim, cw.Dimensions[dim], StagePlaceholders, nil)
			}
		}
	}
	if a := h.Alerts; a != nil && a.CloudWatchAlarms != nil {
		ap := path + ".alerts.cloudwatchAlarms"
		for i, n := range a.CloudWatchAlarms.Names {
			checkPlaceholders(l, fmt.Sprintf("%s.names[%d]", ap, i), "alarm name "+quote(n), n, StagePlaceholders, nil)
		}
		p := a.CloudWatchAlarms.Prefix
		checkPlaceholders(l, ap+".prefix", "alarm prefix "+quote(p), p, StagePlaceholders, nil)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
