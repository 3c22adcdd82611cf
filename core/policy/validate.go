package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/windows"
)

// Validate checks the rules of docs/policy.md on a policy, whether read from YAML or
// built in code. Its paths are those of the YAML document (spec.waves[1].percent).
func Validate(p Policy) issue.List {
	var l issue.List
	if p.Name == "" {
		l.Errorf(CodeNameRequired, "metadata.name", "metadata.name is required: fleets refer to a policy by its name")
	}
	validateWaves(&l, p.Spec.Waves)
	for i := range p.Spec.Waves {
		validateWaveTopology(&l, p.Spec.Waves, i)
	}
	validateValues(&l, p.Spec)
	validateTopology(&l, p.Spec)
	validateGates(&l, p.Spec)
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
			if err := w.Selector.MatchConditions.Err(); err != nil {
				l.Errorf(CodeSelectorInvalid, path+".selector.matchConditions", "%s", err)
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
	onFailures := []OnFailure{OnFailurePause, OnFailureStop, OnFailureRollback, OnFailureRollbackWave, OnFailureRollbackAll}
	switch {
	case s.OnFailure == "" || slices.Contains(onFailures, s.OnFailure):
	default:
		msg := fmt.Sprintf("onFailure %s is not supported; use pause (or stop), rollback, rollback-wave or rollback-all", quote(string(s.OnFailure)))
		if known := OnFailure(strings.ToLower(string(s.OnFailure))); slices.Contains(onFailures, known) {
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

// validateWaveTopology checks the split of one wave: by, parallelRegions,
// bake and maxUnavailable.
func validateWaveTopology(l *issue.List, waves []Wave, i int) {
	w, path := waves[i], fmt.Sprintf("spec.waves[%d]", i)
	switch w.By {
	case "", SplitRegion, SplitZone, SplitAZ:
	default:
		msg := fmt.Sprintf("%s has by %s; use region (one pass per region) or zone (one pass per zone; az is a synonym)", waveLabel(waves, i), quote(string(w.By)))
		if known := Split(strings.ToLower(string(w.By))); known != w.By && slices.Contains([]Split{SplitRegion, SplitZone, SplitAZ}, known) {
			msg += fmt.Sprintf(" (did you mean %q?)", known)
		}
		l.Errorf(CodeTopologyInvalid, path+".by", "%s", msg)
	}
	switch {
	case w.ParallelRegions < 0:
		l.Errorf(CodeTopologyInvalid, path+".parallelRegions", "parallelRegions must be 1 or more, got %d", w.ParallelRegions)
	case w.ParallelRegions > 0 && w.By == "":
		l.Errorf(CodeTopologyInvalid, path+".parallelRegions", "%s has parallelRegions but no by; parallelRegions says how many regions a stage updates together, so add by: region or by: zone, or remove it", waveLabel(waves, i))
	}
	switch {
	case w.Bake < 0:
		l.Errorf(CodeDurationInvalid, path+".bake", "bake must not be negative, got %s", w.Bake)
	case w.Bake > MaxBake:
		l.Errorf(CodeBakeInvalid, path+".bake", "bake %s of %s exceeds 24h; bake at most 24h after a stage, or split the rollout", w.Bake, waveLabel(waves, i))
	}
	validateAmount(l, path+".maxUnavailable", w.MaxUnavailable)
}

// validateAmount checks a maxUnavailable: a number from 1, or a percentage
// from 1% to 100%. The zero Amount is "not set".
func validateAmount(l *issue.List, path string, a Amount) {
	switch {
	case a.IsZero():
	case a.Percent && (a.Value < 1 || a.Value > 100):
		l.Errorf(CodeMaxUnavailableInvalid, path, "maxUnavailable must be a percentage from 1%% to 100%%, got %s", a)
	case !a.Percent && a.Value < 1:
		l.Errorf(CodeMaxUnavailableInvalid, path, "maxUnavailable must be at least 1, got %s", a)
	}
}

// validateTopology checks the rollout's topology fields: the region order,
// the attribute names, maxUnavailable. regions and topology mean something
// only for a wave with by, and are refused without one rather than ignored.
func validateTopology(l *issue.List, s Spec) {
	validateAmount(l, "spec.maxUnavailable", s.MaxUnavailable)
	split := usesTopology(s.Waves)
	first := map[string]int{}
	for i, r := range s.Regions {
		path := fmt.Sprintf("spec.regions[%d]", i)
		if j, dup := first[r]; dup {
			l.Errorf(CodeTopologyInvalid, path, "region %s is already listed at spec.regions[%d]; list each region once", quote(r), j)
			continue
		}
		first[r] = i
		if strings.TrimSpace(r) != r || r == "" {
			l.Errorf(CodeTopologyInvalid, path, "region %s is empty or has spaces at its ends; write the region as agents report it", quote(r))
		}
	}
	if len(s.Regions) > 0 && !split {
		l.Errorf(CodeTopologyInvalid, "spec.regions", "regions orders the regions of the waves with by, but no wave has by; add by: zone or by: region to a wave, or remove regions")
	}
	t := s.Topology
	if t != (Topology{}) && !split && s.Health == nil && len(s.Freezes) == 0 {
		l.Errorf(CodeTopologyInvalid, "spec.topology", "topology names the region, zone and host attributes of the waves with by and of the gates, but no wave has by and there is no health or freeze; add by: zone or by: region to a wave, or remove topology")
	}
	if region, zone := cmp.Or(t.RegionAttribute, DefaultRegionAttribute), cmp.Or(t.ZoneAttribute, DefaultZoneAttribute); region == zone {
		path := "spec.topology.zoneAttribute"
		if t.ZoneAttribute == "" {
			path = "spec.topology.regionAttribute"
		}
		l.Errorf(CodeTopologyInvalid, path, "the region and the zone are both read from the attribute %s; name two different attributes", quote(region))
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
