package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The pure rules of a reading: template substitution, the verdict on a
// metric's value, the wording of firing alerts and the shape of a probe URL.
// The readers (adapters/gate/gateread) do the I/O and call them.

// Vars are the values substituted in a check's templates.
type Vars struct {
	Fleet, Region, Zone, Wave, Stage, Host string
}

// Substitute replaces {fleet}, {region}, {zone}, {wave}, {stage} and {host}
// in tmpl. Any other {x} stays as it is: PromQL has braces of its own
// (`rate(x{job="a"}[5m])`). A policy cannot hold an unknown name, nor one
// that has no value in its field ({host} in a metric, {region} in a probe
// URL): its validation refuses them (policy.StagePlaceholders and
// policy.ProbePlaceholders, which TestPlaceholders_AgreeWithPolicy holds to
// the readers). A substituted value is not scanned again, so a value
// holding "{host}" stays literal.
func Substitute(tmpl string, v Vars) string {
	return strings.NewReplacer(
		"{fleet}", v.Fleet,
		"{region}", v.Region,
		"{zone}", v.Zone,
		"{wave}", v.Wave,
		"{stage}", v.Stage,
		"{host}", v.Host,
	).Replace(tmpl)
}

// Judge is the verdict on one metric value: red without data, above max or
// below min; a value equal to a bound is within it. With neither bound the
// check only asks for data.
//
//	max 0.01, value 0.2   → red   "value 0.2 above 0.01"
//	min 5, value 3        → red   "value 3 below 5"
//	max 0.01, value 0.002 → green "value 0.002 within max 0.01"
func Judge(name, scope string, value float64, hasData bool, min, max *float64) Result {
	r := Result{Kind: KindMetric, Name: name, Scope: scope}
	if !hasData || math.IsNaN(value) {
		r.Red, r.Detail = true, "no data"
		return r
	}
	r.Value = &value
	switch {
	case max != nil && value > *max:
		r.Red, r.Detail = true, fmt.Sprintf("value %s above %s", num(value), num(*max))
	case min != nil && value < *min:
		r.Red, r.Detail = true, fmt.Sprintf("value %s below %s", num(value), num(*min))
	default:
		r.Detail = "value " + num(value) + withinBounds(min, max)
	}
	return r
}

// JudgeSeries judges the values of several series of one query (NaN values
// are no data). The highest value meets max and the lowest meets min, so
// that one bad region or host among many turns the check red:
//
//	max 0.01, values 0.002 0.2 → red "value 0.2 above 0.01 (highest of 2 series)"
func JudgeSeries(name, scope string, values []float64, min, max *float64) Result {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		lo, hi, n = math.Min(lo, v), math.Max(hi, v), n+1
	}
	switch {
	case n == 0:
		return Judge(name, scope, 0, false, min, max)
	case n == 1:
		return Judge(name, scope, hi, true, min, max)
	}
	if r := Judge(name, scope, hi, true, nil, max); r.Red {
		r.Detail += fmt.Sprintf(" (highest of %d series)", n)
		return r
	}
	if r := Judge(name, scope, lo, true, min, nil); r.Red {
		r.Detail += fmt.Sprintf(" (lowest of %d series)", n)
		return r
	}
	r := Judge(name, scope, hi, true, min, max)
	if max == nil && min != nil {
		r.Value = &lo // the value that came nearest to its bound
	}
	r.Detail = fmt.Sprintf("%d series from %s to %s%s", n, num(lo), num(hi), withinBounds(min, max))
	return r
}

// withinBounds words the bounds a green value is within: " within max 0.01",
// " within min 5, max 10", or ", no bound" for a check that only wants data.
func withinBounds(min, max *float64) string {
	var b []string
	if min != nil {
		b = append(b, "min "+num(*min))
	}
	if max != nil {
		b = append(b, "max "+num(*max))
	}
	if len(b) == 0 {
		return ", no bound"
	}
	return " within " + strings.Join(b, ", ")
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// maxNamesShown is how many alert or alarm names a Detail lists.
const maxNamesShown = 3

// Firing words the alerts (or alarms) that block a stage, given one name per
// alert in the order to show them: names repeat when several alerts share
// one, and the count is of alerts.
//
//	"alert", [A B A C D] → "5 alerts firing: A, B, C, …"
func Firing(noun string, names []string) string {
	if len(names) == 0 {
		return "no " + noun + " firing"
	}
	var shown []string
	more := false
	for _, n := range names {
		if n == "" {
			n = "(unnamed)"
		}
		switch {
		case slices.Contains(shown, n):
		case len(shown) == maxNamesShown:
			more = true
		default:
			shown = append(shown, n)
		}
	}
	list := strings.Join(shown, ", ")
	if more {
		list += ", …"
	}
	if len(names) == 1 {
		return fmt.Sprintf("1 %s firing: %s", noun, list)
	}
	return fmt.Sprintf("%d %ss firing: %s", len(names), noun, list)
}

// ValidHost checks a target's host attribute before it goes into a probe
// URL: a host holding "/", "@", "?" or "#" would change what the URL means.
// A port ("10.0.0.7:13133") or an IPv6 literal in brackets is fine.
func ValidHost(host string) error {
	if host == "" {
		return fmt.Errorf("no host attribute")
	}
	for _, c := range host {
		if c <= ' ' || c == 0x7f || strings.ContainsRune(`/\?#@%`, c) {
			return fmt.Errorf("host %q: %q may not stand in a host", host, c)
		}
	}
	return nil
}
