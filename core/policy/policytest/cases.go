// Package policytest holds the documents of the RolloutPolicy parser's table
// tests with what the parser must say of each, so that another test can run
// on the same documents: core/policy's tests check the parser against them,
// and api/schema's test checks that the JSON Schema agrees with the parser.
// A row added here is checked by both.
package policytest

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/policy"
)

// Doc wraps spec lines into a valid RolloutPolicy document named p.
func Doc(spec string) string {
	head := "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: p}\n"
	if spec == "" {
		return head
	}
	return head + "spec:\n  " + strings.ReplaceAll(spec, "\n", "\n  ") + "\n"
}

// Value is a valid spec and what the parser must read from it.
type Value struct {
	Spec  string
	Check func(s policy.Spec) bool
}

// Values pin how each field is read when it is valid.
var Values = []Value{
	{"maxConcurrent: 0", func(s policy.Spec) bool { return s.MaxConcurrent != nil && *s.MaxConcurrent == 0 }},                                      // 0 is kept: unlimited
	{"maxConcurrent: 7", func(s policy.Spec) bool { return s.MaxConcurrent != nil && *s.MaxConcurrent == 7 }},                                      // a plain integer
	{"healthWait: 30s", func(s policy.Spec) bool { return s.MaxConcurrent == nil }},                                                                // not written: nil, the default applies
	{"healthWait: 1h30m", func(s policy.Spec) bool { return s.HealthWait == 90*time.Minute }},                                                      // compound duration
	{"healthWait: 0s", func(s policy.Spec) bool { return s.HealthWait == 0 }},                                                                      // 0 is allowed and means the default
	{"applyTimeout: 45m", func(s policy.Spec) bool { return s.ApplyTimeout == 45*time.Minute }},                                                    // applyTimeout
	{"offlineGracePeriod: 90s", func(s policy.Spec) bool { return s.OfflineGracePeriod == 90*time.Second }},                                        // offlineGracePeriod
	{"failureThreshold: {maxFailedPercent: 10}", func(s policy.Spec) bool { return s.FailureThreshold == policy.Threshold{MaxFailedPercent: 10} }}, // only the percentage
	{"failureThreshold: {maxFailed: 3, maxFailedPercent: 100}", func(s policy.Spec) bool {
		return s.FailureThreshold == policy.Threshold{MaxFailed: 3, MaxFailedPercent: 100}
	}}, // both, 100 is allowed
	{"onFailure: rollback", func(s policy.Spec) bool { return s.OnFailure == policy.OnFailureRollback }},                                                 // rollback
	{"timezoneAttribute: host.tz", func(s policy.Spec) bool { return s.TimezoneAttribute == "host.tz" }},                                                 // another attribute
	{"defaultTimezone: Europe/Berlin", func(s policy.Spec) bool { return s.DefaultTimezone == "Europe/Berlin" }},                                         // an IANA zone
	{"waves: []", func(s policy.Spec) bool { return len(s.Waves) == 0 }},                                                                                 // no waves: the snapshot's default
	{"waves: [{name: a, percent: 10}, {name: b, percent: 100}]", func(s policy.Spec) bool { return s.Waves[1] == policy.Wave{Name: "b", Percent: 100} }}, // percent waves
	{"waves: [{name: a, selector: {}}]", func(s policy.Spec) bool { return s.Waves[0].Selector != nil && s.Waves[0].Selector.Empty() }},                  // an empty selector is a selector
	{"waves: [{name: a, selector: {matchAttributes: {rack: 12, gpu: true}}}]", func(s policy.Spec) bool {
		return reflect.DeepEqual(s.Waves[0].Selector.MatchAttributes, map[string]string{"rack": "12", "gpu": "true"})
	}}, // attribute values are taken as written
	{"waves: [{name: a, percent: 10, requireApproval: false}]", func(s policy.Spec) bool { return !s.Waves[0].RequireApproval }},                                      // explicit false
	{"maintenanceWindows: [{start: '22:00', end: '22:00'}]", func(s policy.Spec) bool { return s.MaintenanceWindows[0].Days == nil }},                                 // no days: every day; start = end: 24 h
	{"maintenanceWindows: [{days: [], start: '00:00', end: '23:59'}]", func(s policy.Spec) bool { return s.MaintenanceWindows[0].End == 1439 }},                       // last minute
	{"maintenanceWindows: [{start: '01:00', end: '02:00', timezone: agent}]", func(s policy.Spec) bool { return s.MaintenanceWindows[0].Timezone == "agent" }},        // agent is allowed in a window
	{"maintenanceWindows: [&w {start: '22:00', end: '05:00'}, *w]", func(s policy.Spec) bool { return len(s.MaintenanceWindows) == 2 }},                               // aliases are followed
	{"maintenanceWindows: [{start: 22:00, end: 05:00}]", func(s policy.Spec) bool { return s.MaintenanceWindows[0].Start == 1320 }},                                   // unquoted HH:MM is a string in YAML 1.2
	{"onFailure: stop", func(s policy.Spec) bool { return s.OnFailure == policy.OnFailureStop }},                                                                      // stop is kept as written; the snapshot says pause
	{"onFailure: rollback-wave", func(s policy.Spec) bool { return s.OnFailure == policy.OnFailureRollbackWave }},                                                     // rollback-wave
	{"onFailure: rollback-all", func(s policy.Spec) bool { return s.OnFailure == policy.OnFailureRollbackAll }},                                                       // rollback-all
	{"maxUnavailable: 3", func(s policy.Spec) bool { return s.MaxUnavailable == policy.Amount{Value: 3} }},                                                            // a number
	{"maxUnavailable: 25%", func(s policy.Spec) bool { return s.MaxUnavailable == policy.Amount{Value: 25, Percent: true} }},                                          // a percentage, unquoted
	{"maxUnavailable: '100%'", func(s policy.Spec) bool { return s.MaxUnavailable == policy.Amount{Value: 100, Percent: true} }},                                      // quoted, 100% allowed
	{"regions: [eu-1, us-1]\nwaves: [{name: a, percent: 100, by: zone}]", func(s policy.Spec) bool { return reflect.DeepEqual(s.Regions, []string{"eu-1", "us-1"}) }}, // region order
	{"topology: {regionAttribute: site.region, zoneAttribute: site.zone}\nwaves: [{name: a, percent: 100, by: region}]", func(s policy.Spec) bool {
		return s.Topology == policy.Topology{RegionAttribute: "site.region", ZoneAttribute: "site.zone"}
	}}, // other attributes
	{"waves: [{name: a, percent: 100, by: az, parallelRegions: 2, bake: 10m, maxUnavailable: 25%}]", func(s policy.Spec) bool {
		return s.Waves[0] == policy.Wave{Name: "a", Percent: 100, By: policy.SplitAZ, ParallelRegions: 2, Bake: 10 * time.Minute, MaxUnavailable: policy.Amount{Value: 25, Percent: true}}
	}}, // every wave field; az kept as written
	{"waves: [{name: a, percent: 100, bake: 24h, maxUnavailable: 1}]", func(s policy.Spec) bool { return s.Waves[0].Bake == 24*time.Hour }}, // bake at the limit, without by
	{"waves: [{name: a, selector: 'cloud.region=eu-1, canary!=true'}]", func(s policy.Spec) bool {
		return s.Waves[0].Selector.MatchConditions.String() == "cloud.region=eu-1, canary!=true" && s.Waves[0].Selector.MatchAttributes == nil
	}}, // the string form of a selector
	{"waves: [{name: a, selector: {matchAttributes: {tier: web}, matchConditions: 'region in (eu-2, us-1)'}}]", func(s policy.Spec) bool {
		return s.Waves[0].Selector.MatchAttributes["tier"] == "web" && s.Waves[0].Selector.MatchConditions.String() == "region in (eu-2, us-1)"
	}}, // both forms in the mapping
	{"waves: [{name: a, selector: &s 'tz=Europe/Berlin'}, {name: b, selector: *s}]", func(s policy.Spec) bool { return len(s.Waves[1].Selector.MatchConditions) == 1 }}, // an alias to a string selector
}

// Document is a valid document and the name of its policy.
type Document struct{ In, Name string }

// ValidDocuments are whole documents without a problem.
var ValidDocuments = []Document{
	{Doc(""), "p"},                         // no spec: every default
	{Doc("{}"), "p"},                       // empty spec
	{Doc("healthWait: 1m") + "---\n", "p"}, // a trailing document separator with nothing after it
	{"# c\n" + Doc("healthWait: 1m"), "p"}, // comments
}

// SpecIssue is a spec with one problem: the parser reports exactly one issue,
// an error with Code at Path whose message contains Msg.
type SpecIssue struct{ Spec, Code, Path, Msg string }

// SpecIssues add one problem each to a valid document.
var SpecIssues = []SpecIssue{
	{"maxconcurrent: 3", policy.CodeUnknownField, "spec.maxconcurrent", `unknown field "maxconcurrent"; did you mean "maxConcurrent"?`},                                                               // case
	{"max_concurrent: 3", policy.CodeUnknownField, "spec.max_concurrent", `did you mean "maxConcurrent"?`},                                                                                            // snake case
	{"parallel: 3", policy.CodeUnknownField, "spec.parallel", `unknown field "parallel"`},                                                                                                             // not a field at all
	{"waves: [{name: a, Percent: 20}]", policy.CodeUnknownField, "spec.waves[0].Percent", `did you mean "percent"?`},                                                                                  // inside a wave
	{"failureThreshold: {maxfailed: 2}", policy.CodeUnknownField, "spec.failureThreshold.maxfailed", `did you mean "maxFailed"?`},                                                                     // inside the threshold
	{"maintenanceWindows: [{start: '22:00', end: '05:00', tz: UTC}]", policy.CodeUnknownField, "spec.maintenanceWindows[0].tz", `"tz"`},                                                               // inside a window
	{"waves: [{name: a, selector: {labels.wave: canary}}]", policy.CodeUnknownField, `spec.waves[0].selector["labels.wave"]`, "under matchAttributes"},                                                // forgot matchAttributes
	{"maxConcurrent: '5'", policy.CodeTypeInvalid, "spec.maxConcurrent", `expected an integer, got the string "5"`},                                                                                   // quoted number
	{"maxConcurrent: 2.5", policy.CodeTypeInvalid, "spec.maxConcurrent", "got the number 2.5"},                                                                                                        // not whole
	{"maxConcurrent: 99999999999999999999999", policy.CodeTypeInvalid, "spec.maxConcurrent", "expected an integer"},                                                                                   // overflows int
	{"maxConcurrent: [5]", policy.CodeTypeInvalid, "spec.maxConcurrent", "got a list"},                                                                                                                // a list
	{"healthWait: 30", policy.CodeTypeInvalid, "spec.healthWait", `without a unit; write a number with a unit, e.g. "30s"`},                                                                           // bare number
	{"healthWait: 1.5", policy.CodeTypeInvalid, "spec.healthWait", "without a unit"},                                                                                                                  // bare float
	{"healthWait:", policy.CodeTypeInvalid, "spec.healthWait", "got null"},                                                                                                                            // empty value
	{"healthWait: true", policy.CodeTypeInvalid, "spec.healthWait", "expected a duration, got the boolean true"},                                                                                      // a boolean
	{"waves: {name: a}", policy.CodeTypeInvalid, "spec.waves", "expected a list, got a mapping"},                                                                                                      // one wave without a list
	{"waves: [a]", policy.CodeTypeInvalid, "spec.waves[0]", `expected a mapping of fields, got the string "a"`},                                                                                       // a wave is a mapping
	{"waves: [{name: a, percent: '10%'}]", policy.CodeTypeInvalid, "spec.waves[0].percent", "write 10 without the percent sign"},                                                                      // percent sign
	{"waves: [{name: 7, percent: 10}]", policy.CodeTypeInvalid, "spec.waves[0].name", `quote it: "7"`},                                                                                                // a number as name
	{"waves: [{name: a, percent: 10, requireApproval: yes}]", policy.CodeTypeInvalid, "spec.waves[0].requireApproval", "expected true or false"},                                                      // yes is a string in YAML 1.2
	{"waves: [{name: a, selector: [x]}]", policy.CodeTypeInvalid, "spec.waves[0].selector", "got a list"},                                                                                             // selector is a mapping
	{"waves: [{name: a, selector: {matchAttributes: [x]}}]", policy.CodeTypeInvalid, "spec.waves[0].selector.matchAttributes", "got a list"},                                                          // matchAttributes is a mapping
	{"waves: [{name: a, selector: {matchAttributes: {zone: [a]}}}]", policy.CodeTypeInvalid, "spec.waves[0].selector.matchAttributes.zone", "expected an attribute value"},                            // a list as value
	{"waves: [{name: a, selector: {matchAttributes: {zone: }}}]", policy.CodeTypeInvalid, "spec.waves[0].selector.matchAttributes.zone", "got null"},                                                  // no value
	{"failureThreshold: 1", policy.CodeTypeInvalid, "spec.failureThreshold", "expected a mapping of fields, got the integer 1"},                                                                       // threshold is a mapping
	{"onFailure: [pause]", policy.CodeTypeInvalid, "spec.onFailure", "expected a string"},                                                                                                             // a list
	{"maintenanceWindows: [{days: Mon, start: '22:00', end: '05:00'}]", policy.CodeTypeInvalid, "spec.maintenanceWindows[0].days", "days: [Mon, Tue, Wed]"},                                           // days is a list
	{"maintenanceWindows: [{days: [1], start: '22:00', end: '05:00'}]", policy.CodeTypeInvalid, "spec.maintenanceWindows[0].days[0]", "expected a string"},                                            // a number as day
	{"maintenanceWindows: [{start: 2200, end: '05:00'}]", policy.CodeTypeInvalid, "spec.maintenanceWindows[0].start", `write e.g. "22:00"`},                                                           // a number as time
	{"? [a]\n: 1", policy.CodeTypeInvalid, "spec", "keys must be plain strings"},                                                                                                                      // a complex key
	{"healthWait: 5 minutes", policy.CodeDurationInvalid, "spec.healthWait", `invalid duration "5 minutes"`},                                                                                          // words
	{"healthWait: 5M", policy.CodeDurationInvalid, "spec.healthWait", "units: ns, us, ms, s, m, h"},                                                                                                   // unknown unit
	{"healthWait: ''", policy.CodeDurationInvalid, "spec.healthWait", `invalid duration ""`},                                                                                                          // empty string
	{"applyTimeout: 1d", policy.CodeDurationInvalid, "spec.applyTimeout", `write "24h" for a day`},                                                                                                    // days
	{"offlineGracePeriod: -5m", policy.CodeDurationInvalid, "spec.offlineGracePeriod", "must not be negative, got -5m0s"},                                                                             // negative
	{"healthWait: 9999999999h", policy.CodeDurationInvalid, "spec.healthWait", "invalid duration"},                                                                                                    // overflows
	{"waves: [{name: a}]", policy.CodeWaveInvalid, "spec.waves[0]", `wave "a" has neither a selector nor a percent`},                                                                                  // neither
	{"waves: [{name: a, percent: 10, selector: {}}]", policy.CodeWaveInvalid, "spec.waves[0]", `wave "a" has both a selector and a percent`},                                                          // both
	{"waves: [{name: a, percent: 0}]", policy.CodeWaveInvalid, "spec.waves[0].percent", "from 1 to 100, got 0"},                                                                                       // 0 percent
	{"waves: [{name: a, percent: 101}]", policy.CodeWaveInvalid, "spec.waves[0].percent", "from 1 to 100, got 101"},                                                                                   // above 100
	{"waves: [{name: a, percent: -5}]", policy.CodeWaveInvalid, "spec.waves[0].percent", "got -5"},                                                                                                    // negative
	{"waves: [{name: a, percent: 50}, {name: b, percent: 50}]", policy.CodeWaveInvalid, "spec.waves[1].percent", `wave "b" has percent 50, which is not more than the 50 of wave "a"`},                // equal
	{"waves: [{name: a, percent: 50}, {name: s, selector: {}}, {name: b, percent: 20}]", policy.CodeWaveInvalid, "spec.waves[2].percent", `not more than the 50 of wave "a"`},                         // selector waves in between
	{"waves: [{name: a, selector: {matchAttributes: {'': x}}}]", policy.CodeWaveInvalid, `spec.waves[0].selector.matchAttributes[""]`, "attribute name"},                                              // empty attribute name
	{"waves: [{percent: 10}]", policy.CodeWaveNameInvalid, "spec.waves[0].name", "the wave at spec.waves[0] has no name"},                                                                             // no name
	{"waves: [{name: '', percent: 10}]", policy.CodeWaveNameInvalid, "spec.waves[0].name", "has no name"},                                                                                             // empty name
	{"waves: [{name: a, percent: 10}, {name: a, percent: 20}]", policy.CodeWaveNameInvalid, "spec.waves[1].name", `wave name "a" is already used by spec.waves[0]`},                                   // duplicate
	{"waves: [{name: rest, percent: 10}, {name: b, percent: 20}]", policy.CodeWaveNameInvalid, "spec.waves[0].name", "reserved for the last wave"},                                                    // rest not last
	{"waves: [{name: rest, percent: 100}, {name: b, selector: {}}]", policy.CodeWaveNameInvalid, "spec.waves[0].name", "reserved for the last wave"},                                                  // rest not last, though of 100 percent
	{"waves: [{name: a, percent: 10}, {name: rest, percent: 50}]", policy.CodeWaveNameInvalid, "spec.waves[1].name", "must have percent: 100"},                                                        // rest below 100
	{"waves: [{name: a, percent: 10}, {name: rest, selector: {}}]", policy.CodeWaveNameInvalid, "spec.waves[1].name", "must have percent: 100"},                                                       // rest as selector wave
	{"maxConcurrent: -1", policy.CodeValueInvalid, "spec.maxConcurrent", "0 (unlimited) or more, got -1"},                                                                                             // negative
	{"failureThreshold: {maxFailed: -1}", policy.CodeValueInvalid, "spec.failureThreshold.maxFailed", "0 or more, got -1"},                                                                            // negative
	{"failureThreshold: {maxFailedPercent: 101}", policy.CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "from 0 to 100, got 101"},                                                        // above 100
	{"failureThreshold: {maxFailedPercent: -1}", policy.CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "got -1"},                                                                         // negative
	{"onFailure: retry", policy.CodeValueInvalid, "spec.onFailure", `onFailure "retry" is not supported; use pause (or stop), rollback, rollback-wave or rollback-all`},                               // unknown
	{"onFailure: Rollback-All", policy.CodeValueInvalid, "spec.onFailure", `did you mean "rollback-all"?`},                                                                                            // case of a new value
	{"onFailure: Pause", policy.CodeValueInvalid, "spec.onFailure", `did you mean "pause"?`},                                                                                                          // case
	{"onFailure: ''", policy.CodeValueInvalid, "spec.onFailure", "onFailure is empty"},                                                                                                                // empty would mean the default
	{"timezoneAttribute: ''", policy.CodeValueInvalid, "spec.timezoneAttribute", "timezoneAttribute is empty"},                                                                                        // empty would mean the default
	{"maintenanceWindows: [{start: '25:00', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].start", "hour 25 is out of range"},                                                 // no such hour
	{"maintenanceWindows: [{start: '22:00', end: '24:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].end", "midnight is 00:00"},                                                         // 24:00
	{"maintenanceWindows: [{start: '7:5', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].start", "two digits each"},                                                           // one digit
	{"maintenanceWindows: [{start: '12:60', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].start", "minute 60"},                                                               // no such minute
	{"maintenanceWindows: [{days: [Monday], start: '22:00', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].days[0]", `unknown weekday "Monday"; use Mon`},                     // long name
	{"maintenanceWindows: [{days: ['Mon,'], start: '22:00', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].days[0]", `"Mon,"`},                                                // stray comma
	{"maintenanceWindows: [{days: [Tue, mon], start: '22:00', end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].days[1]", `"mon"`},                                               // lower case
	{"maintenanceWindows: [{end: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].start", "start is missing"},                                                                        // no start
	{"maintenanceWindows: [{start: '05:00'}]", policy.CodeWindowInvalid, "spec.maintenanceWindows[0].end", "end is missing"},                                                                          // no end
	{"defaultTimezone: Local", policy.CodeTimezoneInvalid, "spec.defaultTimezone", "Local is never accepted"},                                                                                         // host zone
	{"defaultTimezone: agent", policy.CodeTimezoneInvalid, "spec.defaultTimezone", "defaultTimezone cannot be agent"},                                                                                 // agent only in windows
	{"defaultTimezone: Mars/Base", policy.CodeTimezoneInvalid, "spec.defaultTimezone", `unknown time zone "Mars/Base"`},                                                                               // no such zone
	{"defaultTimezone: utc", policy.CodeTimezoneInvalid, "spec.defaultTimezone", `did you mean "UTC"?`},                                                                                               // case
	{"defaultTimezone: ''", policy.CodeTimezoneInvalid, "spec.defaultTimezone", "defaultTimezone is empty"},                                                                                           // empty
	{"defaultTimezone: ../../etc/passwd", policy.CodeTimezoneInvalid, "spec.defaultTimezone", "unknown time zone"},                                                                                    // not a path
	{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: Local}]", policy.CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "Local is never accepted"},                           // host zone in a window
	{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: Europe/Berln}]", policy.CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "Europe/Berlin"},                              // typo
	{"maintenanceWindows: [{start: '22:00', end: '05:00', timezone: ''}]", policy.CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", "timezone is empty"},                                    // empty
	{"healthWait: 5m\nhealthWait: 6m", policy.CodeYAMLInvalid, "spec.healthWait", `"healthWait" is set twice (lines 5 and 6)`},                                                                        // duplicate key
	{"<<: {healthWait: 5m}", policy.CodeYAMLInvalid, "spec", "merge keys (<<) are not supported"},                                                                                                     // merge key
	{"waves: [{name: a, selector: 'region in (eu-1'}]", policy.CodeSelectorInvalid, "spec.waves[0].selector", `condition 1 "region in (eu-1": "(" without ")"`},                                       // string form, unclosed set
	{"waves: [{name: a, selector: {matchConditions: 'a=b,'}}]", policy.CodeSelectorInvalid, "spec.waves[0].selector.matchConditions", "the condition is empty"},                                       // mapping form, trailing comma
	{"waves: [{name: a, selector: ''}]", policy.CodeSelectorInvalid, "spec.waves[0].selector", "the conditions are empty"},                                                                            // empty string
	{"waves: [{name: a, selector: {matchConditions: [a=b]}}]", policy.CodeTypeInvalid, "spec.waves[0].selector.matchConditions", "expected a string, got a list"},                                     // a list
	{"waves: [{name: a, selector: {matchExpressions: 'a=b'}}]", policy.CodeUnknownField, "spec.waves[0].selector.matchExpressions", "or is a string of conditions"},                                   // not the Kubernetes name
	{"waves: [{name: a, selector: 7}]", policy.CodeTypeInvalid, "spec.waves[0].selector", "expected a mapping of fields, got the integer 7"},                                                          // a number
	{"waves: [{name: a, percent: 100, bake: 25h}]", policy.CodeBakeInvalid, "spec.waves[0].bake", `bake 25h0m0s of wave "a" exceeds 24h`},                                                             // above 24h
	{"waves: [{name: a, percent: 100, bake: -1m}]", policy.CodeDurationInvalid, "spec.waves[0].bake", "bake must not be negative, got -1m0s"},                                                         // negative
	{"waves: [{name: a, percent: 100, bake: 10}]", policy.CodeTypeInvalid, "spec.waves[0].bake", "without a unit"},                                                                                    // bare number
	{"waves: [{name: a, percent: 100, maxUnavailable: 0}]", policy.CodeMaxUnavailableInvalid, "spec.waves[0].maxUnavailable", "at least 1 or 1%, got 0"},                                              // 0
	{"waves: [{name: a, percent: 100, maxUnavailable: 0%}]", policy.CodeMaxUnavailableInvalid, "spec.waves[0].maxUnavailable", "got 0%"},                                                              // 0%
	{"maxUnavailable: -2", policy.CodeMaxUnavailableInvalid, "spec.maxUnavailable", "at least 1, got -2"},                                                                                             // negative
	{"maxUnavailable: 150%", policy.CodeMaxUnavailableInvalid, "spec.maxUnavailable", "from 1% to 100%, got 150%"},                                                                                    // above 100%
	{"maxUnavailable: '3'", policy.CodeMaxUnavailableInvalid, "spec.maxUnavailable", `invalid maxUnavailable "3"`},                                                                                    // a quoted number
	{"maxUnavailable: half", policy.CodeMaxUnavailableInvalid, "spec.maxUnavailable", `invalid maxUnavailable "half"`},                                                                                // words
	{"maxUnavailable: 2.5", policy.CodeTypeInvalid, "spec.maxUnavailable", "expected a number or a percentage, got the number 2.5"},                                                                   // a fraction
	{"maxUnavailable: [1]", policy.CodeTypeInvalid, "spec.maxUnavailable", "got a list"},                                                                                                              // a list
	{"waves: [{name: a, percent: 100, by: rack}]", policy.CodeTopologyInvalid, "spec.waves[0].by", `wave "a" has by "rack"; use region`},                                                              // unknown split
	{"waves: [{name: a, percent: 100, by: Zone}]", policy.CodeTopologyInvalid, "spec.waves[0].by", `did you mean "zone"?`},                                                                            // case
	{"waves: [{name: a, percent: 100, by: ''}]", policy.CodeTopologyInvalid, "spec.waves[0].by", "by is empty"},                                                                                       // empty
	{"waves: [{name: a, percent: 100, by: zone, parallelRegions: 0}]", policy.CodeTopologyInvalid, "spec.waves[0].parallelRegions", "1 or more, got 0"},                                               // 0
	{"waves: [{name: a, percent: 100, by: zone, parallelRegions: -1}]", policy.CodeTopologyInvalid, "spec.waves[0].parallelRegions", "1 or more, got -1"},                                             // negative
	{"waves: [{name: a, percent: 100, parallelRegions: 2}]", policy.CodeTopologyInvalid, "spec.waves[0].parallelRegions", `wave "a" has parallelRegions but no by`},                                   // without by
	{"regions: [eu-1, us-1, eu-1]\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTopologyInvalid, "spec.regions[2]", `region "eu-1" is already listed at spec.regions[0]`},                  // listed twice
	{"regions: [eu-1, '']\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTopologyInvalid, "spec.regions[1]", `region "" is empty`},                                                          // empty
	{"regions: [eu-1, 7]\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTypeInvalid, "spec.regions[1]", `quote it: "7"`},                                                                    // a number
	{"regions: eu-1\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTypeInvalid, "spec.regions", "regions: [eu-west-1, us-east-1]"},                                                          // not a list
	{"regions: [eu-1]", policy.CodeTopologyInvalid, "spec.regions", "no wave has by"},                                                                                                                 // without by
	{"topology: {regionAttribute: r}", policy.CodeTopologyInvalid, "spec.topology", "no wave has by"},                                                                                                 // without by
	{"topology: {zoneAttribute: cloud.region}\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTopologyInvalid, "spec.topology.zoneAttribute", `both read from the attribute "cloud.region"`}, // the same attribute
	{"topology: {regionAttribute: ''}\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeTopologyInvalid, "spec.topology.regionAttribute", "regionAttribute is empty"},                          // empty
	{"topology: {region: r}\nwaves: [{name: a, percent: 100, by: zone}]", policy.CodeUnknownField, "spec.topology.region", `unknown field "region"`},                                                  // unknown key
}

// DocumentIssue is a whole document with one problem, reported as one
// issue as in SpecIssue.
type DocumentIssue struct{ In, Code, Path, Msg string }

const head = "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\n"

// DocumentIssues cover the document as a whole: YAML, apiVersion, kind,
// metadata.
var DocumentIssues = []DocumentIssue{
	{"", policy.CodeYAMLInvalid, "", "the document is empty"},                                                                                         // nothing
	{"# only a comment\n", policy.CodeYAMLInvalid, "", "the document is empty"},                                                                       // comment only
	{"---\n", policy.CodeYAMLInvalid, "", "the document is empty"},                                                                                    // separator only
	{"- a\n", policy.CodeYAMLInvalid, "", "this document is a list"},                                                                                  // a list
	{"just text\n", policy.CodeYAMLInvalid, "", `this document is the string "just text"`},                                                            // a scalar
	{"a: [\n", policy.CodeYAMLInvalid, "", "not valid YAML: "},                                                                                        // syntax error
	{"a:\n\t- b\n", policy.CodeYAMLInvalid, "", "not valid YAML: "},                                                                                   // tab indentation
	{head + "metadata: {name: p}\n---\nkind: Fleet\n", policy.CodeYAMLInvalid, "", "more than one"},                                                   // two documents
	{head + "metadata: {name: p}\n---\n[\n", policy.CodeYAMLInvalid, "", "not valid YAML"},                                                            // broken second document
	{"kind: RolloutPolicy\nmetadata: {name: p}\n", policy.CodeAPIVersionInvalid, "apiVersion", "apiVersion is missing"},                               // no apiVersion
	{"apiVersion: v1\nkind: RolloutPolicy\nmetadata: {name: p}\n", policy.CodeAPIVersionInvalid, "apiVersion", `apiVersion "v1" is not supported`},    // wrong apiVersion
	{"apiVersion: myriarch.dev/v1alpha1\nmetadata: {name: p}\n", policy.CodeKindInvalid, "kind", "kind is missing"},                                   // no kind
	{"apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: p}\n", policy.CodeKindInvalid, "kind", `kind "Fleet" is not a rollout policy`}, // another object
	{head, policy.CodeNameRequired, "metadata.name", "metadata.name is required"},                                                                     // no metadata
	{head + "metadata: {name: ''}\n", policy.CodeNameRequired, "metadata.name", "metadata.name is required"},                                          // empty name
	{head + "metadata: {name: p, labels: {}}\n", policy.CodeUnknownField, "metadata.labels", `unknown field "labels"`},                                // only name in metadata
	{head + "metadata: {name: p}\nstatus: {}\n", policy.CodeUnknownField, "status", `unknown field "status"`},                                         // top-level key
	{head + "metadata: {name: p}\nSpec: {}\n", policy.CodeUnknownField, "Spec", `did you mean "spec"?`},                                               // case of spec
	{head + "metadata: [p]\n", policy.CodeTypeInvalid, "metadata", "got a list"},                                                                      // metadata is a mapping
	{head + "metadata: {name: p}\nspec: [a]\n", policy.CodeTypeInvalid, "spec", "got a list"},                                                         // spec is a mapping
	{head + "metadata: {name: p}\nspec:\n", policy.CodeTypeInvalid, "spec", "got null"},                                                               // spec written but empty
	{AliasBomb(), policy.CodeYAMLInvalid, "", "more than 10000 values"},                                                                               // aliases expanding too far
}

// AliasBomb is 1,000 windows that alias one window of 1,000 days: a small
// document that would expand to a million values.
func AliasBomb() string {
	days := strings.TrimSuffix(strings.Repeat("Mon, ", 1000), ", ")
	refs := strings.Repeat(", *w", 999)
	return Doc("maintenanceWindows: [&w {start: '00:00', end: '00:00', days: [" + days + "]}" + refs + "]")
}

// GateIssues are specs whose gate fields have a problem: among the issues
// is an error with Code at Path whose message contains Msg.
var GateIssues = []SpecIssue{
	{"health: {}", policy.CodeGateInvalid, "spec.health", "health has no check"},
	{"health: {interval: 100ms, probes: [{url: 'http://{host}/'}]}", policy.CodeGateInvalid, "spec.health.interval", "at least 1s"},
	{"health: {failuresToStop: 0, probes: [{url: 'http://{host}/'}]}", policy.CodeValueInvalid, "spec.health.failuresToStop", "must be 1 or more, got 0"},
	{"health: {probes: [{url: 'http://example.com/{host}'}]}", policy.CodeGateInvalid, "spec.health.probes[0].url", "must start with http://{host}"},
	{"health: {probes: [{url: 'http://{host}.evil.com/'}]}", policy.CodeGateInvalid, "spec.health.probes[0].url", "{host} must be followed by :port"},
	{"health: {probes: [{url: 'ftp://{host}/'}]}", policy.CodeGateInvalid, "spec.health.probes[0].url", "must start with"},
	{"health: {probes: [{url: 'http://{host}/', expectStatus: 42}]}", policy.CodeGateInvalid, "spec.health.probes[0].expectStatus", "from 100 to 599"},
	{"health: {probes: [{url: 'http://{host}/', timeout: 5}]}", policy.CodeTypeInvalid, "spec.health.probes[0].timeout", "without a unit"},
	{"health: {metrics: [{name: m, query: up}]}", policy.CodeGateInvalid, "spec.health.metrics[0]", "neither max nor min"},
	{"health: {metrics: [{name: m, query: up, min: 2, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].min", "min 2 is above max 1"},
	{"health: {metrics: [{name: m, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].query", "needs a query"},
	{"health: {metrics: [{query: up, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].name", "has no name"},
	{"health: {metrics: [{name: m, query: up, max: 1}, {name: m, query: up, max: 2}]}", policy.CodeGateInvalid, "spec.health.metrics[1].name", "already used"},
	{"health: {metrics: [{name: m, query: up, max: '1'}]}", policy.CodeTypeInvalid, "spec.health.metrics[0].max", "expected a number"},
	{"health: {metrics: [{name: m, provider: datadog, query: up, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].provider", "unknown provider"},
	{"health: {metrics: [{name: m, provider: cloudwatch, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0]", "a metric-math expression"},
	{"health: {metrics: [{name: m, provider: cloudwatch, cloudwatch: {namespace: N}, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].cloudwatch", "namespace and metricName"},
	{"health: {metrics: [{name: m, query: up, cloudwatch: {namespace: N, metricName: M}, max: 1}]}", policy.CodeGateInvalid, "spec.health.metrics[0].cloudwatch", "provider is prometheus"},
	{`health: {metrics: [{name: m, query: 'x{az="{az}"}', max: 1}]}`, policy.CodePlaceholderUnknown, "spec.health.metrics[0].query", "metric m: unknown placeholder {az}; the placeholders are {fleet}, {region}, {zone}, {wave}, {stage}"},
	{"health: {probes: [{url: 'http://{host}/{zone}'}]}", policy.CodePlaceholderUnknown, "spec.health.probes[0].url", "unknown placeholder {zone}"},
	{"health: {alerts: {}}", policy.CodeGateInvalid, "spec.health.alerts", "needs blockOn"},
	{"health: {alerts: {blockOn: ['severity']}}", policy.CodeGateInvalid, "spec.health.alerts.blockOn[0]", "want key=value"},
	{"health: {alerts: {blockOn: ['severity=~(']}}", policy.CodeGateInvalid, "spec.health.alerts.blockOn[0]", "error parsing regexp"},
	{"health: {alerts: {cloudwatchAlarms: {}}}", policy.CodeGateInvalid, "spec.health.alerts.cloudwatchAlarms", "names or a prefix"},
	{"health: {Probes: []}", policy.CodeUnknownField, "spec.health.Probes", `did you mean "probes"?`},
	{"waves: [{name: a, percent: 100, batchBake: 25h}]", policy.CodeBakeInvalid, "spec.waves[0].batchBake", "exceeds 24h"},
	{"waves: [{name: a, percent: 10}]\napprovalsBetween: [canary]", policy.CodeApprovalInvalid, "spec.approvalsBetween[0]", `names the wave "canary", which the policy does not have`},
	{"approvals: {required: 0}", policy.CodeValueInvalid, "spec.approvals.required", "must be 1 or more"},
	{"approvals: {expiry: 10s}", policy.CodeApprovalInvalid, "spec.approvals.expiry", "at least 1m"},
	{"freezes: [{name: f}]", policy.CodeFreezeInvalid, "spec.freezes[0]", "has no period"},
	{"freezes: [{from: '2026-12-20T00:00:00Z', until: '2027-01-04T00:00:00Z'}]", policy.CodeFreezeInvalid, "spec.freezes[0].name", "has no name"},
	{"freezes: [{name: f, from: '2026-12-20T00:00:00Z'}]", policy.CodeFreezeInvalid, "spec.freezes[0]", "needs both from and until"},
	{"freezes: [{name: f, from: '2026-12-20T00:00:00Z', until: '2026-12-19T00:00:00Z'}]", policy.CodeFreezeInvalid, "spec.freezes[0].until", "is not after from"},
	{"freezes: [{name: f, from: 'next monday', until: '2026-12-19T00:00:00Z'}]", policy.CodeFreezeInvalid, "spec.freezes[0].from", "RFC 3339"},
	{"freezes: [{name: f, from: '2026-12-20T00:00:00Z', until: '2027-01-04T00:00:00Z', start: '01:00', end: '02:00'}]", policy.CodeFreezeInvalid, "spec.freezes[0]", "not both"},
	{"freezes: [{name: f, start: '01:00', end: '02:00', timezone: agent}]", policy.CodeTimezoneInvalid, "spec.freezes[0].timezone", "cannot be agent"},
	{"freezes: [{name: f, start: '25:00', end: '02:00'}]", policy.CodeWindowInvalid, "spec.freezes[0].start", "invalid"},
	{"freezes: [{name: f, regions: [''], start: '01:00', end: '02:00'}]", policy.CodeFreezeInvalid, "spec.freezes[0].regions[0]", "region is empty"},
}

// Case is one document of the tables above, named by its table and row.
type Case struct{ Name, Doc string }

// All is every document of the tables, valid or not, for tests that run
// something else on the same documents.
func All() []Case {
	var out []Case
	add := func(table string, i int, doc string) {
		out = append(out, Case{Name: table + "[" + strconv.Itoa(i) + "]", Doc: doc})
	}
	for i, v := range Values {
		add("Values", i, Doc(v.Spec))
	}
	for i, d := range ValidDocuments {
		add("ValidDocuments", i, d.In)
	}
	for i, c := range SpecIssues {
		add("SpecIssues", i, Doc(c.Spec))
	}
	for i, c := range DocumentIssues {
		add("DocumentIssues", i, c.In)
	}
	for i, c := range GateIssues {
		add("GateIssues", i, Doc(c.Spec))
	}
	return out
}
