package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/pkg/issue"
	"github.com/myriarch/myriarch/pkg/windows"
)

// Validate checks the rules of the spec on a policy, whether read from YAML or
// built in code. Its paths are those of the YAML document (spec.waves[1].percent).
func Validate(p Policy) issue.List {
	var l issue.List
	if p.Name == "" {
		l.Errorf(CodeNameRequired, "metadata.name", "metadata.name is required: fleets refer to a policy by its name")
	}
	validateWaves(&l, p.Spec.Waves)
	validateValues(&l, p.Spec)
	if tz := p.Spec.DefaultTimezone; tz == windows.AgentZone {
		l.Errorf(CodeTimezoneInvalid, "spec.defaultTimezone", `defaultTimezone cannot be agent: it is the zone used when an agent has none; write an IANA zone such as "UTC"`)
	} else if tz != "" {
		validateZone(&l, "spec.defaultTimezone", tz)
	}
	for i, w := range p.Spec.MaintenanceWindows {
		validateWindow(&l, fmt.Sprintf("spec.maintenanceWindows[%d]", i), w)
	}
	return l
}

// validateWaves checks the wave rules: a selector or a percent (1..100),
// percents that strictly increase, and unique names with "rest" only last.
func validateWaves(l *issue.List, waves []Wave) {
	firstUse := map[string]int{}
	lastPercent := -1 // index of the last wave with a valid percent
	for i, w := range waves {
		path := fmt.Sprintf("spec.waves[%d]", i)
		validateWaveName(l, waves, i, firstUse)
		switch {
		case w.Selector == nil && w.Percent == 0:
			l.Errorf(CodeWaveInvalid, path, "%s has neither a selector nor a percent; give it selector.matchAttributes or a percent from 1 to 100", waveLabel(waves, i))
		case w.Selector != nil && w.Percent != 0:
			l.Errorf(CodeWaveInvalid, path, "%s has both a selector and a percent; a wave has one or the other, so split it into two waves", waveLabel(waves, i))
		case w.Selector != nil:
			if _, ok := w.Selector.MatchAttributes[""]; ok {
				l.Errorf(CodeWaveInvalid, path+`.selector.matchAttributes[""]`, "an attribute name in matchAttributes is empty; name the agent attribute to match")
			}
		case w.Percent < 1 || w.Percent > 100:
			l.Errorf(CodeWaveInvalid, path+".percent", "percent must be from 1 to 100, got %d", w.Percent)
		case lastPercent >= 0 && w.Percent <= waves[lastPercent].Percent:
			l.Errorf(CodeWaveInvalid, path+".percent",
				"%s has percent %d, which is not more than the %d of %s; percents are cumulative shares of the fleet and must strictly increase",
				waveLabel(waves, i), w.Percent, waves[lastPercent].Percent, waveLabel(waves, lastPercent))
		default:
			lastPercent = i
		}
	}
}

func validateWaveName(l *issue.List, waves []Wave, i int, firstUse map[string]int) {
	w, path := waves[i], fmt.Sprintf("spec.waves[%d].name", i)
	first, used := firstUse[w.Name]
	switch {
	case w.Name == "":
		l.Errorf(CodeWaveNameInvalid, path, "%s has no name; every wave needs a unique name, since operators approve waves by name and number", waveLabel(waves, i))
	case used:
		l.Errorf(CodeWaveNameInvalid, path, "wave name %s is already used by spec.waves[%d]; wave names must be unique", quote(w.Name), first)
	case w.Name == RestWaveName && i != len(waves)-1:
		l.Errorf(CodeWaveNameInvalid, path, "the name rest is reserved for the last wave (a final wave rest is appended when the waves do not reach 100 percent); rename this wave")
	case w.Name == RestWaveName && w.Percent != 100:
		l.Errorf(CodeWaveNameInvalid, path, "a last wave named rest must have percent: 100; otherwise a final wave rest is appended after it and the name is used twice")
	}
	if _, ok := firstUse[w.Name]; !ok && w.Name != "" {
		firstUse[w.Name] = i
	}
}

// waveLabel names a wave in a message: by its name, or by its path when it has none.
func waveLabel(waves []Wave, i int) string {
	if waves[i].Name == "" {
		return fmt.Sprintf("the wave at spec.waves[%d]", i)
	}
	return "wave " + quote(waves[i].Name)
}

func validateValues(l *issue.List, s Spec) {
	if s.MaxConcurrent != nil && *s.MaxConcurrent < 0 {
		l.Errorf(CodeValueInvalid, "spec.maxConcurrent", "maxConcurrent must be 0 (unlimited) or more, got %d", *s.MaxConcurrent)
	}
	if n := s.FailureThreshold.MaxFailed; n < 0 {
		l.Errorf(CodeValueInvalid, "spec.failureThreshold.maxFailed", "maxFailed must be 0 or more, got %d", n)
	}
	if n := s.FailureThreshold.MaxFailedPercent; n < 0 || n > 100 {
		l.Errorf(CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "maxFailedPercent must be from 0 to 100, got %d", n)
	}
	switch s.OnFailure {
	case "", OnFailurePause, OnFailureRollback:
	default:
		msg := fmt.Sprintf("onFailure %s is not supported; use pause or rollback", quote(string(s.OnFailure)))
		if known := strings.ToLower(string(s.OnFailure)); known == string(OnFailurePause) || known == string(OnFailureRollback) {
			msg += fmt.Sprintf(" (did you mean %q?)", known)
		}
		l.Errorf(CodeValueInvalid, "spec.onFailure", "%s", msg)
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"healthWait", s.HealthWait}, {"applyTimeout", s.ApplyTimeout}, {"offlineGracePeriod", s.OfflineGracePeriod}} {
		if d.value < 0 {
			l.Errorf(CodeDurationInvalid, "spec."+d.name, "%s must not be negative, got %s", d.name, d.value)
		}
	}
}

func validateWindow(l *issue.List, path string, w windows.Window) {
	for j, d := range w.Days {
		if d < time.Sunday || d > time.Saturday {
			l.Errorf(CodeWindowInvalid, fmt.Sprintf("%s.days[%d]", path, j), "weekday %d is out of range; use Mon, Tue, Wed, Thu, Fri, Sat or Sun", int(d))
		}
	}
	for _, t := range []struct {
		name  string
		value windows.TimeOfDay
	}{{"start", w.Start}, {"end", w.End}} {
		if !t.value.Valid() {
			l.Errorf(CodeWindowInvalid, path+"."+t.name, "%s must be a time of day from 00:00 to 23:59, got %d minutes after midnight", t.name, int(t.value))
		}
	}
	if w.Timezone != "" && w.Timezone != windows.AgentZone {
		validateZone(l, path+".timezone", w.Timezone)
	}
}

// validateZone accepts IANA zone names only. Local is refused so that no
// decision depends on the zone of the host that happens to run it.
func validateZone(l *issue.List, path, name string) {
	_, err := windows.LoadZone(name)
	switch {
	case err == nil:
	case errors.Is(err, windows.ErrZoneLocal):
		l.Errorf(CodeTimezoneInvalid, path, `the zone name Local is never accepted, so that times do not depend on the server host; write an IANA zone such as "Europe/Berlin" or "UTC"`)
	default:
		msg := fmt.Sprintf(`unknown time zone %s; write an IANA zone name such as "Europe/Berlin" or "UTC"`, quote(name))
		if i := slices.Index(commonZones, strings.ToUpper(name)); i >= 0 && commonZones[i] != name {
			msg += fmt.Sprintf(" (did you mean %q?)", commonZones[i])
		}
		l.Errorf(CodeTimezoneInvalid, path, "%s", msg)
	}
}

// commonZones are the all-capital zone names that people write in lower case.
var commonZones = []string{"UTC", "GMT"}
