package policy

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/issue"
	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/windows"
)

// doc wraps spec lines into a valid RolloutPolicy document.
func doc(spec string) []byte {
	head := "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: p}\n"
	if spec == "" {
		return []byte(head)
	}
	return []byte(head + "spec:\n  " + strings.ReplaceAll(spec, "\n", "\n  ") + "\n")
}

func TestParse_CanaryThenAll(t *testing.T) {
	data, err := os.ReadFile("testdata/canary-then-all.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, issues := Parse(data)
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	five := 5
	want := Policy{Name: "canary-then-all", Spec: Spec{
		Waves: []Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "rest", Percent: 100, RequireApproval: true},
		},
		MaxConcurrent:      &five,
		HealthWait:         5 * time.Minute,
		ApplyTimeout:       30 * time.Minute,
		OfflineGracePeriod: 30 * time.Minute,
		FailureThreshold:   Threshold{MaxFailed: 1},
		OnFailure:          OnFailurePause,
		TimezoneAttribute:  "site.timezone",
		DefaultTimezone:    "UTC",
		MaintenanceWindows: []windows.Window{
			{Days: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}, Start: 22 * 60, End: 5 * 60},
			{Days: []time.Weekday{time.Saturday, time.Sunday}, Start: 0, End: 0, Timezone: "UTC"},
		},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", p, want)
	}
}

// TestParse_Values pins how each field is read when it is valid.
func TestParse_Values(t *testing.T) {
	tests := []struct {
		spec  string
		check func(s Spec) bool
	}{
		{"maxConcurrent: 0", func(s Spec) bool { return s.MaxConcurrent != nil && *s.MaxConcurrent == 0 }},                                     // 0 is kept: unlimited
		{"maxConcurrent: 7", func(s Spec) bool { return s.MaxConcurrent != nil && *s.MaxConcurrent == 7 }},                                     // a plain integer
		{"healthWait: 30s", func(s Spec) bool { return s.MaxConcurrent == nil }},                                                               // not written: nil, the default applies
		{"healthWait: 1h30m", func(s Spec) bool { return s.HealthWait == 90*time.Minute }},                                                     // compound duration
		{"healthWait: 0s", func(s Spec) bool { return s.HealthWait == 0 }},                                                                     // 0 is allowed and means the default
		{"applyTimeout: 45m", func(s Spec) bool { return s.ApplyTimeout == 45*time.Minute }},                                                   // applyTimeout
		{"offlineGracePeriod: 90s", func(s Spec) bool { return s.OfflineGracePeriod == 90*time.Second }},                                       // offlineGracePeriod
		{"failureThreshold: {maxFailedPercent: 10}", func(s Spec) bool { return s.FailureThreshold == Threshold{0, 10} }},                      // only the percentage
		{"failureThreshold: {maxFailed: 3, maxFailedPercent: 100}", func(s Spec) bool { return s.FailureThreshold == Threshold{3, 100} }},      // both, 100 is allowed
		{"onFailure: rollback", func(s Spec) bool { return s.OnFailure == OnFailureRollback }},                                                 // rollback
		{"timezoneAttribute: host.tz", func(s Spec) bool { return s.TimezoneAttribute == "host.tz" }},                                          // another attribute
		{"defaultTimezone: Europe/Berlin", func(s Spec) bool { return s.DefaultTimezone == "Europe/Berlin" }},                                  // an IANA zone
		{"waves: []", func(s Spec) bool { return len(s.Waves) == 0 }},                                                                          // no waves: the snapshot's default
		{"waves: [{name: a, percent: 10}, {name: b, percent: 100}]", func(s Spec) bool { return s.Waves[1] == Wave{Name: "b", Percent: 100} }}, // percent waves
		{"waves: [{name: a, selector: {}}]", func(s Spec) bool { return s.Waves[0].Selector != nil && s.Waves[0].Selector.Empty() }},           // an empty selector is a selector
		{"waves: [{name: a, selector: {matchAttributes: {rack: 12, gpu: true}}}]", func(s Spec) bool {
			return reflect.DeepEqual(s.Waves[0].Selector.MatchAttributes, map[string]string{"rack": "12", "gpu": "true"})
		}}, // attribute values are taken as written
		{"waves: [{name: a, percent: 10, requireApproval: false}]", func(s Spec) bool { return !s.Waves[0].RequireApproval }},                                      // explicit false
		{"maintenanceWindows: [{start: '22:00', end: '22:00'}]", func(s Spec) bool { return s.MaintenanceWindows[0].Days == nil }},                                 // no days: every day; start = end: 24 h
		{"maintenanceWindows: [{days: [], start: '00:00', end: '23:59'}]", func(s Spec) bool { return s.MaintenanceWindows[0].End == 1439 }},                       // last minute
		{"maintenanceWindows: [{start: '01:00', end: '02:00', timezone: agent}]", func(s Spec) bool { return s.MaintenanceWindows[0].Timezone == "agent" }},        // agent is allowed in a window
		{"maintenanceWindows: [&w {start: '22:00', end: '05:00'}, *w]", func(s Spec) bool { return len(s.MaintenanceWindows) == 2 }},                               // aliases are followed
		{"maintenanceWindows: [{start: 22:00, end: 05:00}]", func(s Spec) bool { return s.MaintenanceWindows[0].Start == 1320 }},                                   // unquoted HH:MM is a string in YAML 1.2
		{"onFailure: stop", func(s Spec) bool { return s.OnFailure == OnFailureStop }},                                                                             // stop is kept as written; the snapshot says pause
		{"onFailure: rollback-wave", func(s Spec) bool { return s.OnFailure == OnFailureRollbackWave }},                                                            // rollback-wave
		{"onFailure: rollback-all", func(s Spec) bool { return s.OnFailure == OnFailureRollbackAll }},                                                              // rollback-all
		{"maxUnavailable: 3", func(s Spec) bool { return s.MaxUnavailable == Amount{Value: 3} }},                                                                   // a number
		{"maxUnavailable: 25%", func(s Spec) bool { return s.MaxUnavailable == Amount{Value: 25, Percent: true} }},                                                 // a percentage, unquoted
		{"maxUnavailable: '100%'", func(s Spec) bool { return s.MaxUnavailable == Amount{Value: 100, Percent: true} }},                                             // quoted, 100% allowed
		{"regions: [eu-1, us-1]\nwaves: [{name: a, percent: 100, by: zone}]", func(s Spec) bool { return reflect.DeepEqual(s.Regions, []string{"eu-1", "us-1"}) }}, // region order
		{"topology: {regionAttribute: site.region, zoneAttribute: site.zone}\nwaves: [{name: a, percent: 100, by: region}]", func(s Spec) bool {
			return s.Topology == Topology{RegionAttribute: "site.region", ZoneAttribute: "site.zone"}
		}}, // other attributes
		{"waves: [{name: a, percent: 100, by: az, parallelRegions: 2, bake: 10m, maxUnavailable: 25%}]", func(s Spec) bool {
			return s.Waves[0] == Wave{Name: "a", Percent: 100, By: SplitAZ, ParallelRegions: 2, Bake: 10 * time.Minute, MaxUnavailable: Amount{Value: 25, Percent: true}}
		}}, // every wave field; az kept as written
		{"waves: [{name: a, percent: 100, bake: 24h, maxUnavailable: 1}]", func(s Spec) bool { return s.Waves[0].Bake == 24*time.Hour }}, // bake at the limit, without by
		{"waves: [{name: a, selector: 'cloud.region=eu-1, canary!=true'}]", func(s Spec) bool {
			return s.Waves[0].Selector.MatchConditions.String() == "cloud.region=eu-1, canary!=true" && s.Waves[0].Selector.MatchAttributes == nil
		}}, // the string form of a selector
		{"waves: [{name: a, selector: {matchAttributes: {tier: web}, matchConditions: 'region in (eu-2, us-1)'}}]", func(s Spec) bool {
			return s.Waves[0].Selector.MatchAttributes["tier"] == "web" && s.Waves[0].Selector.MatchConditions.String() == "region in (eu-2, us-1)"
		}}, // both forms in the mapping
		{"waves: [{name: a, selector: &s 'tz=Europe/Berlin'}, {name: b, selector: *s}]", func(s Spec) bool { return len(s.Waves[1].Selector.MatchConditions) == 1 }}, // an alias to a string selector
	}
	for _, tt := range tests {
		p, issues := Parse(doc(tt.spec))
		if len(issues) != 0 {
			t.Errorf("%q: issues %v", tt.spec, issues)
			continue
		}
		if !tt.check(p.Spec) {
			t.Errorf("%q: wrong value %+v", tt.spec, p.Spec)
		}
	}
}

func TestParse_ValidDocuments(t *testing.T) {
	tests := []struct{ in, name string }{
		{string(doc("")), "p"},                         // no spec: every default
		{string(doc("{}")), "p"},                       // empty spec
		{string(doc("healthWait: 1m")) + "---\n", "p"}, // a trailing document separator with nothing after it
		{"# c\n" + string(doc("healthWait: 1m")), "p"}, // comments
	}
	for _, tt := range tests {
		p, issues := Parse([]byte(tt.in))
		if len(issues) != 0 || p.Name != tt.name {
			t.Errorf("%q: name %q, issues %v", tt.in, p.Name, issues)
		}
	}
}

// TestParse_SpecIssues: each row adds one problem to a valid document and
// expects exactly one issue, with its code, path and a part of its message.
func TestParse_SpecIssues(t *testing.T) {
	tests := []struct{ spec, code, path, msg string }{
		{"maxconcurrent: 3", CodeUnknownField, "spec.maxconcurrent", `unknown field "maxconcurrent"; did you mean "maxConcurrent"?`},                                                               // case
		{"max_concurrent: 3", CodeUnknownField, "spec.max_concurrent", `did you mean "maxConcurrent"?`},                                                                                            // snake case
		{"parallel: 3", CodeUnknownField, "spec.parallel", `unknown field "parallel"`},                                                                                                             // not a field at all
		{"waves: [{name: a, Percent: 20}]", CodeUnknownField, "spec.waves[0].Percent", `did you mean "percent"?`},                                                                                  // inside a wave
		{"failureThreshold: {maxfailed: 2}", CodeUnknownField, "spec.failureThreshold.maxfailed", `did you mean "maxFailed"?`},                                                                     // inside the threshold
		{"maintenanceWindows: [{start: '22:00', end: '05:00', tz: UTC}]", CodeUnknownField, "spec.maintenanceWindows[0].tz", `"tz"`},                                                               // inside a window
		{"waves: [{name: a, selector: {labels.wave: canary}}]", CodeUnknownField, `spec.waves[0].selector["labels.wave"]`, "under matchAttributes"},                                                // forgot matchAttributes
		{"maxConcurrent: '5'", CodeTypeInvalid, "spec.maxConcurrent", `expected an integer, got the string "5"`},                                                                                   // quoted number
		{"maxConcurrent: 2.5", CodeTypeInvalid, "spec.maxConcurrent", "got the number 2.5"},                                                                                                        // not whole
		{"maxConcurrent: 99999999999999999999999", CodeTypeInvalid, "spec.maxConcurrent", "expected an integer"},                                                                                   // overflows int
		{"maxConcurrent: [5]", CodeTypeInvalid, "spec.maxConcurrent", "got a list"},                                                                                                                // a list
		{"healthWait: 30", CodeTypeInvalid, "spec.healthWait", `without a unit; write a number with a unit, e.g. "30s"`},                                                                           // bare number
		{"healthWait: 1.5", CodeTypeInvalid, "spec.healthWait", "without a unit"},                                                                                                                  // bare float
		{"healthWait:", CodeTypeInvalid, "spec.healthWait", "got null"},                                                                                                                            // empty value
		{"healthWait: true", CodeTypeInvalid, "spec.healthWait", "expected a duration, got the boolean true"},                                                                                      // a boolean
		{"waves: {name: a}", CodeTypeInvalid, "spec.waves", "expected a list, got a mapping"},                                                                                                      // one wave without a list
		{"waves: [a]", CodeTypeInvalid, "spec.waves[0]", `expected a mapping of fields, got the string "a"`},                                                                                       // a wave is a mapping
		{"waves: [{name: a, percent: '10%'}]", CodeTypeInvalid, "spec.waves[0].percent", "write 10 without the percent sign"},                                                                      // percent sign
		{"waves: [{name: 7, percent: 10}]", CodeTypeInvalid, "spec.waves[0].name", `quote it: "7"`},                                                                                                // a number as name
		{"waves: [{name: a, percent: 10, requireApproval: yes}]", CodeTypeInvalid, "spec.waves[0].requireApproval", "expected true or false"},                                                      // yes is a string in YAML 1.2
		{"waves: [{name: a, selector: [x]}]", CodeTypeInvalid, "spec.waves[0].selector", "got a list"},                                                                                             // selector is a mapping
		{"waves: [{name: a, selector: {matchAttributes: [x]}}]", CodeTypeInvalid, "spec.waves[0].selector.matchAttributes", "got a list"},                                                          // matchAttributes is a mapping
		{"waves: [{name: a, selector: {matchAttributes: {zone: [a]}}}]", CodeTypeInvalid, "spec.waves[0].selector.matchAttributes.zone", "expected an attribute value"},                            // a list as value
		{"waves: [{name: a, selector: {matchAttributes: {zone: }}}]", CodeTypeInvalid, "spec.waves[0].selector.matchAttributes.zone", "got null"},                                                  // no value
		{"failureThreshold: 1", CodeTypeInvalid, "spec.failureThreshold", "expected a mapping of fields, got the integer 1"},                                                                       // threshold is a mapping
		{"onFailure: [pause]", CodeTypeInvalid, "spec.onFailure", "expected a string"},                                                                                                             // a list
		{"maintenanceWindows: [{days: Mon, start: '22:00', end: '05:00'}]", CodeTypeInvalid, "spec.maintenanceWindows[0].days", "days: [Mon, Tue, Wed]"},                                           // days is a list
		{"maintenanceWindows: [{days: [1], start: '22:00', end: '05:00'}]", CodeTypeInvalid, "spec.maintenanceWindows[0].days[0]", "expected a string"},                                            // a number as day
		{"maintenanceWindows: [{start: 2200, end: '05:00'}]", CodeTypeInvalid, "spec.maintenanceWindows[0].start", `write e.g. "22:00"`},                                                           // a number as time
		{"? [a]\n: 1", CodeTypeInvalid, "spec", "keys must be plain strings"},                                                                                                                      // a complex key
		{"healthWait: 5 minutes", CodeDurationInvalid, "spec.healthWait", `invalid duration "5 minutes"`},                                                                                          // words
		{"healthWait: 5M", CodeDurationInvalid, "spec.healthWait", "units: ns, us, ms, s, m, h"},                                                                                                   // unknown unit
		{"healthWait: ''", CodeDurationInvalid, "spec.healthWait", `invalid duration ""`},                                                                                                          // empty string
		{"applyTimeout: 1d", CodeDurationInvalid, "spec.applyTimeout", `write "24h" for a day`},                                                                                                    // days
		{"offlineGracePeriod: -5m", CodeDurationInvalid, "spec.offlineGracePeriod", "must not be negative, got -5m0s"},                                                                             // negative
		{"healthWait: 9999999999h", CodeDurationInvalid, "spec.healthWait", "invalid duration"},                                                                                                    // overflows
		{"waves: [{name: a}]", CodeWaveInvalid, "spec.waves[0]", `wave "a" has neither a selector nor a percent`},                                                                                  // neither
		{"waves: [{name: a, percent: 10, selector: {}}]", CodeWaveInvalid, "spec.waves[0]", `wave "a" has both a selector and a percent`},                                                          // both
		{"waves: [{name: a, percent: 0}]", CodeWaveInvalid, "spec.waves[0].percent", "from 1 to 100, got 0"},                                                                                       // 0 percent
		{"waves: [{name: a, percent: 101}]", CodeWaveInvalid, "spec.waves[0].percent", "from 1 to 100, got 101"},                                                                                   // above 100
		{"waves: [{name: a, percent: -5}]", CodeWaveInvalid, "spec.waves[0].percent", "got -5"},                                                                                                    // negative
		{"waves: [{name: a, percent: 50}, {name: b, percent: 50}]", CodeWaveInvalid, "spec.waves[1].percent", `wave "b" has percent 50, which is not more than the 50 of wave "a"`},                // equal
		{"waves: [{name: a, percent: 50}, {name: s, selector: {}}, {name: b, percent: 20}]", CodeWaveInvalid, "spec.waves[2].percent", `not more than the 50 of wave "a"`},                         // selector waves in between
		{"waves: [{name: a, selector: {matchAttributes: {'': x}}}]", CodeWaveInvalid, `spec.waves[0].selector.matchAttributes[""]`, "attribute name"},                                              // empty attribute name
		{"waves: [{percent: 10}]", CodeWaveNameInvalid, "spec.waves[0].name", "the wave at spec.waves[0] has no name"},                                                                             // no name
		{"waves: [{name: '', percent: 10}]", CodeWaveNameInvalid, "spec.waves[0].name", "has no name"},                                                                                             // empty name
		{"waves: [{name: a, percent: 10}, {name: a, percent: 20}]", CodeWaveNameInvalid, "spec.waves[1].name", `wave name "a" is already used by spec.waves[0]`},                                   // duplicate
		{"waves: [{name: rest, percent: 10}, {name: b, percent: 20}]", CodeWaveNameInvalid, "spec.waves[0].name", "reserved for the last wave"},                                                    // rest not last
		{"waves: [{name: a, percent: 10}, {name: rest, percent: 50}]", CodeWaveNameInvalid, "spec.waves[1].name", "must have percent: 100"},                                                        // rest below 100
		{"waves: [{name: a, percent: 10}, {name: rest, selector: {}}]", CodeWaveNameInvalid, "spec.waves[1].name", "must have percent: 100"},                                                       // rest as selector wave
		{"maxConcurrent: -1", CodeValueInvalid, "spec.maxConcurrent", "0 (unlimited) or more, got -1"},                                                                                             // negative
		{"failureThreshold: {maxFailed: -1}", CodeValueInvalid, "spec.failureThreshold.maxFailed", "0 or more, got -1"},                                                                            // negative
		{"failureThreshold: {maxFailedPercent: 101}", CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "from 0 to 100, got 101"},                                                        // above 100
		{"failureThreshold: {maxFailedPercent: -1}", CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "got -1"},                                                                         // negative
		{"onFailure: retry", CodeValueInvalid, "spec.onFailure", `onFailure "retry" is not supported; use pause (or stop), rollback, rollback-wave or rollback-all`},                               // unknown
		{"onFailure: Rollback-All", CodeValueInvalid, "spec.onFailure", `did you mean "rollback-all"?`},                                                                                            // case of a new value
		{"onFailure: Pause", CodeValueInvalid, "spec.onFailure", `did you mean "pause"?`},                                                                                                          // case
		{"onFailure: ''", CodeValueInvalid, "spec.onFailure", "onFailure is empty"},                                                                                                                // empty would mean the default
		{"timezoneAttribute: ''", CodeValueInvalid, "spec.timezoneAttribute", "timezoneAttribute is empty"},                                                                                        // empty would mean the default
		{"maintenanceWindows: [{start: '25:00', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].start", "hour 25 is out of range"},                                                 // no such hour
		{"maintenanceWindows: [{start: '22:00', end: '24:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].end", "midnight is 00:00"},                                                         // 24:00
		{"maintenanceWindows: [{start: '7:5', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].start", "two digits each"},                                                           // one digit
		{"maintenanceWindows: [{start: '12:60', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].start", "minute 60"},                                                               // no such minute
		{"maintenanceWindows: [{days: [Monday], start: '22:00', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].days[0]", `unknown weekday "Monday"; use Mon`},                     // long name
		{"maintenanceWindows: [{days: ['Mon,'], start: '22:00', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].days[0]", `"Mon,"`},                                                // stray comma
		{"maintenanceWindows: [{days: [Tue, mon], start: '22:00', end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].days[1]", `"mon"`},                                               // lower case
		{"maintenanceWindows: [{end: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].start", "start is missing"},                                                                        // no start
		{"maintenanceWindows: [{start: '05:00'}]", CodeWindowInvalid, "spec.maintenanceWindows[0].end", "end is missing"},                                                                          // no end
		{"defaultTimezone: Local", CodeTimezoneInvalid, "spec.defaultTimezone", "Local is never accepted"},                                                                                         // host zone
		{"defaultTimezone: agent", CodeTimezoneInvalid, "spec.defaultTimezone", "defaultTimezone cannot be agent"},                                                                                 // agent only in windows
		{"defaultTimezone: Mars/Base", CodeTimezoneInvalid, "spec.defaultTimezone", `unknown time zone "Mars/Base"`},                                                                               // no such zone
		{"defaultTimezone: utc", CodeTimezoneInvalid, "spec.defaultTimezone", `did you mean "UTC"?`},                                                                                               // case
		{"defaultTimezone: ''", CodeTimezoneInvalid, "spec.defaultTimezone", "defaultTimezone is empty"},                                                                                           // empty
		{"defaultTimezone: ../../etc/passwd", CodeTimezoneInvalid, "spec.defaultTimezone", "unknown time zone"},                                                                                    // not a path
		{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: Local}]", CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "Local is never accepted"},                           // host zone in a window
		{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: Europe/Berln}]", CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "Europe/Berlin"},                              // typo
		{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: ''}]", CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "timezone is empty"},                                    // empty
		{"healthWait: 5m\nhealthWait: 6m", CodeYAMLInvalid, "spec.healthWait", `"healthWait" is set twice (lines 5 and 6)`},                                                                        // duplicate key
		{"<<: {healthWait: 5m}", CodeYAMLInvalid, "spec", "merge keys (<<) are not supported"},                                                                                                     // merge key
		{"waves: [{name: a, selector: 'region in (eu-1'}]", CodeSelectorInvalid, "spec.waves[0].selector", `condition 1 "region in (eu-1": "(" without ")"`},                                       // string form, unclosed set
		{"waves: [{name: a, selector: {matchConditions: 'a=b,'}}]", CodeSelectorInvalid, "spec.waves[0].selector.matchConditions", "the condition is empty"},                                       // mapping form, trailing comma
		{"waves: [{name: a, selector: ''}]", CodeSelectorInvalid, "spec.waves[0].selector", "the conditions are empty"},                                                                            // empty string
		{"waves: [{name: a, selector: {matchConditions: [a=b]}}]", CodeTypeInvalid, "spec.waves[0].selector.matchConditions", "expected a string, got a list"},                                     // a list
		{"waves: [{name: a, selector: {matchExpressions: 'a=b'}}]", CodeUnknownField, "spec.waves[0].selector.matchExpressions", "or is a string of conditions"},                                   // not the Kubernetes name
		{"waves: [{name: a, selector: 7}]", CodeTypeInvalid, "spec.waves[0].selector", "expected a mapping of fields, got the integer 7"},                                                          // a number
		{"waves: [{name: a, percent: 100, bake: 25h}]", CodeBakeInvalid, "spec.waves[0].bake", `bake 25h0m0s of wave "a" exceeds 24h`},                                                             // above 24h
		{"waves: [{name: a, percent: 100, bake: -1m}]", CodeDurationInvalid, "spec.waves[0].bake", "bake must not be negative, got -1m0s"},                                                         // negative
		{"waves: [{name: a, percent: 100, bake: 10}]", CodeTypeInvalid, "spec.waves[0].bake", "without a unit"},                                                                                    // bare number
		{"waves: [{name: a, percent: 100, maxUnavailable: 0}]", CodeMaxUnavailableInvalid, "spec.waves[0].maxUnavailable", "at least 1 or 1%, got 0"},                                              // 0
		{"waves: [{name: a, percent: 100, maxUnavailable: 0%}]", CodeMaxUnavailableInvalid, "spec.waves[0].maxUnavailable", "got 0%"},                                                              // 0%
		{"maxUnavailable: -2", CodeMaxUnavailableInvalid, "spec.maxUnavailable", "at least 1, got -2"},                                                                                             // negative
		{"maxUnavailable: 150%", CodeMaxUnavailableInvalid, "spec.maxUnavailable", "from 1% to 100%, got 150%"},                                                                                    // above 100%
		{"maxUnavailable: '3'", CodeMaxUnavailableInvalid, "spec.maxUnavailable", `invalid maxUnavailable "3"`},                                                                                    // a quoted number
		{"maxUnavailable: half", CodeMaxUnavailableInvalid, "spec.maxUnavailable", `invalid maxUnavailable "half"`},                                                                                // words
		{"maxUnavailable: 2.5", CodeTypeInvalid, "spec.maxUnavailable", "expected a number or a percentage, got the number 2.5"},                                                                   // a fraction
		{"maxUnavailable: [1]", CodeTypeInvalid, "spec.maxUnavailable", "got a list"},                                                                                                              // a list
		{"waves: [{name: a, percent: 100, by: rack}]", CodeTopologyInvalid, "spec.waves[0].by", `wave "a" has by "rack"; use region`},                                                              // unknown split
		{"waves: [{name: a, percent: 100, by: Zone}]", CodeTopologyInvalid, "spec.waves[0].by", `did you mean "zone"?`},                                                                            // case
		{"waves: [{name: a, percent: 100, by: ''}]", CodeTopologyInvalid, "spec.waves[0].by", "by is empty"},                                                                                       // empty
		{"waves: [{name: a, percent: 100, by: zone, parallelRegions: 0}]", CodeTopologyInvalid, "spec.waves[0].parallelRegions", "1 or more, got 0"},                                               // 0
		{"waves: [{name: a, percent: 100, by: zone, parallelRegions: -1}]", CodeTopologyInvalid, "spec.waves[0].parallelRegions", "1 or more, got -1"},                                             // negative
		{"waves: [{name: a, percent: 100, parallelRegions: 2}]", CodeTopologyInvalid, "spec.waves[0].parallelRegions", `wave "a" has parallelRegions but no by`},                                   // without by
		{"regions: [eu-1, us-1, eu-1]\nwaves: [{name: a, percent: 100, by: zone}]", CodeTopologyInvalid, "spec.regions[2]", `region "eu-1" is already listed at spec.regions[0]`},                  // listed twice
		{"regions: [eu-1, '']\nwaves: [{name: a, percent: 100, by: zone}]", CodeTopologyInvalid, "spec.regions[1]", `region "" is empty`},                                                          // empty
		{"regions: [eu-1, 7]\nwaves: [{name: a, percent: 100, by: zone}]", CodeTypeInvalid, "spec.regions[1]", `quote it: "7"`},                                                                    // a number
		{"regions: eu-1\nwaves: [{name: a, percent: 100, by: zone}]", CodeTypeInvalid, "spec.regions", "regions: [eu-west-1, us-east-1]"},                                                          // not a list
		{"regions: [eu-1]", CodeTopologyInvalid, "spec.regions", "no wave has by"},                                                                                                                 // without by
		{"topology: {regionAttribute: r}", CodeTopologyInvalid, "spec.topology", "no wave has by"},                                                                                                 // without by
		{"topology: {zoneAttribute: cloud.region}\nwaves: [{name: a, percent: 100, by: zone}]", CodeTopologyInvalid, "spec.topology.zoneAttribute", `both read from the attribute "cloud.region"`}, // the same attribute
		{"topology: {regionAttribute: ''}\nwaves: [{name: a, percent: 100, by: zone}]", CodeTopologyInvalid, "spec.topology.regionAttribute", "regionAttribute is empty"},                          // empty
		{"topology: {region: r}\nwaves: [{name: a, percent: 100, by: zone}]", CodeUnknownField, "spec.topology.region", `unknown field "region"`},                                                  // unknown key
	}
	for _, tt := range tests {
		_, issues := Parse(doc(tt.spec))
		expectOne(t, tt.spec, issues, tt.code, tt.path, tt.msg)
	}
}

// TestParse_DocumentIssues covers the document as a whole: YAML, apiVersion,
// kind, metadata.
func TestParse_DocumentIssues(t *testing.T) {
	const head = "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\n"
	tests := []struct{ in, code, path, msg string }{
		{"", CodeYAMLInvalid, "", "the document is empty"},                                                                                         // nothing
		{"# only a comment\n", CodeYAMLInvalid, "", "the document is empty"},                                                                       // comment only
		{"---\n", CodeYAMLInvalid, "", "the document is empty"},                                                                                    // separator only
		{"- a\n", CodeYAMLInvalid, "", "this document is a list"},                                                                                  // a list
		{"just text\n", CodeYAMLInvalid, "", `this document is the string "just text"`},                                                            // a scalar
		{"a: [\n", CodeYAMLInvalid, "", "not valid YAML: "},                                                                                        // syntax error
		{"a:\n\t- b\n", CodeYAMLInvalid, "", "not valid YAML: "},                                                                                   // tab indentation
		{head + "metadata: {name: p}\n---\nkind: Fleet\n", CodeYAMLInvalid, "", "more than one"},                                                   // two documents
		{head + "metadata: {name: p}\n---\n[\n", CodeYAMLInvalid, "", "not valid YAML"},                                                            // broken second document
		{"kind: RolloutPolicy\nmetadata: {name: p}\n", CodeAPIVersionInvalid, "apiVersion", "apiVersion is missing"},                               // no apiVersion
		{"apiVersion: v1\nkind: RolloutPolicy\nmetadata: {name: p}\n", CodeAPIVersionInvalid, "apiVersion", `apiVersion "v1" is not supported`},    // wrong apiVersion
		{"apiVersion: myriarch.dev/v1alpha1\nmetadata: {name: p}\n", CodeKindInvalid, "kind", "kind is missing"},                                   // no kind
		{"apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: p}\n", CodeKindInvalid, "kind", `kind "Fleet" is not a rollout policy`}, // another object
		{head, CodeNameRequired, "metadata.name", "metadata.name is required"},                                                                     // no metadata
		{head + "metadata: {name: ''}\n", CodeNameRequired, "metadata.name", "metadata.name is required"},                                          // empty name
		{head + "metadata: {name: p, labels: {}}\n", CodeUnknownField, "metadata.labels", `unknown field "labels"`},                                // only name in metadata
		{head + "metadata: {name: p}\nstatus: {}\n", CodeUnknownField, "status", `unknown field "status"`},                                         // top-level key
		{head + "metadata: {name: p}\nSpec: {}\n", CodeUnknownField, "Spec", `did you mean "spec"?`},                                               // case of spec
		{head + "metadata: [p]\n", CodeTypeInvalid, "metadata", "got a list"},                                                                      // metadata is a mapping
		{head + "metadata: {name: p}\nspec: [a]\n", CodeTypeInvalid, "spec", "got a list"},                                                         // spec is a mapping
		{head + "metadata: {name: p}\nspec:\n", CodeTypeInvalid, "spec", "got null"},                                                               // spec written but empty
		{aliasBomb(), CodeYAMLInvalid, "", "more than 10000 values"},                                                                               // aliases expanding too far
	}
	for _, tt := range tests {
		_, issues := Parse([]byte(tt.in))
		expectOne(t, tt.in, issues, tt.code, tt.path, tt.msg)
	}
}

// aliasBomb is 1,000 windows that alias one window of 1,000 days: a small
// document that would expand to a million values.
func aliasBomb() string {
	days := strings.TrimSuffix(strings.Repeat("Mon, ", 1000), ", ")
	refs := strings.Repeat(", *w", 999)
	return string(doc("maintenanceWindows: [&w {start: '00:00', end: '00:00', days: [" + days + "]}" + refs + "]"))
}

func expectOne(t *testing.T, in string, issues issue.List, code, path, msg string) {
	t.Helper()
	if len(issues) != 1 {
		t.Errorf("%q: want one issue %s at %s, got %d: %v", clip(in), code, path, len(issues), issues)
		return
	}
	got := issues[0]
	if got.Code != code || got.Path != path || got.Severity != issue.Error || !strings.Contains(got.Message, msg) {
		t.Errorf("%q:\n got %v\nwant error %s at %s: ...%s...", clip(in), got, code, path, msg)
	}
}

// TestParse_IssuesInDocumentOrder: reading problems come first, in the order
// of the document, then Validate's; a value whose reading failed is not
// reported again by Validate.
func TestParse_IssuesInDocumentOrder(t *testing.T) {
	_, issues := Parse(doc("waves: [{name: a, percent: '5%'}, {name: b, percent: 200}]\nhealthWait: 5"))
	var got []string
	for _, is := range issues {
		got = append(got, is.Code+" "+is.Path)
	}
	want := []string{
		"type_invalid spec.waves[0].percent", // read: "5%"; no "neither selector nor percent" for it
		"type_invalid spec.healthWait",       // read: bare number
		"wave_invalid spec.waves[1].percent", // validate: 200
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues = %q, want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, outer string
		want        bool
	}{
		{"spec.waves[1]", "spec.waves[1]", true},         // the same
		{"spec.waves[1].percent", "spec.waves[1]", true}, // a field inside
		{"spec.waves[1][\"x\"]", "spec.waves[1]", true},  // a quoted key inside
		{"spec.waves[10]", "spec.waves[1]", false},       // another index
		{"spec.healthWaitX", "spec.healthWait", false},   // another key with the same start
		{"spec.waves", "spec.waves[1]", false},           // the outer one is not within
	}
	for _, tt := range tests {
		if got := within(tt.path, tt.outer); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.path, tt.outer, got, tt.want)
		}
	}
}
