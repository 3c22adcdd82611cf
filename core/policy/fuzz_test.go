package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// FuzzParse: any input yields a policy and issues, never a panic; every issue
// is an error with a known code and a message; a policy without errors
// passes Validate and its snapshot survives a JSON round trip.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, spec := range fuzzSeeds {
		f.Add([]byte(policytest.Doc(spec)))
	}
	for _, c := range policytest.All() {
		f.Add([]byte(c.Doc))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		p, issues := policy.Parse(data)
		checkIssues(t, issues)
		if issues.HasErrors() {
			return
		}
		if again := policy.Validate(p); len(again) != 0 {
			t.Fatalf("Parse found no issue but Validate did: %v", again)
		}
		for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
			s := p.Snapshot(k)
			out, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("marshal snapshot: %v", err)
			}
			var back policy.Snapshot
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("unmarshal snapshot %s: %v", out, err)
			}
			if !reflect.DeepEqual(back, s) {
				t.Fatalf("snapshot round trip\n got %+v\nwant %+v", back, s)
			}
		}
	})
}

func checkIssues(t *testing.T, issues issue.List) {
	t.Helper()
	for _, is := range issues {
		if !slices.Contains(policy.Codes, is.Code) || is.Severity != issue.Error || is.Message == "" {
			t.Fatalf("bad issue %#v", is)
		}
	}
}

// fuzzSeeds are spec bodies, valid and invalid, that reach every decoder.
var fuzzSeeds = []string{
	"maxconcurrent: 3",
	"healthWait: 30",
	"healthWait: 5 minutes",
	"applyTimeout: 1d",
	"offlineGracePeriod: -5m",
	"waves: [{name: a, percent: '10%'}, {name: a, percent: 5}, {name: rest, selector: {x: y}}, 7]",
	"waves: [{name: a, selector: {matchAttributes: {rack: 12, '': x, z: [1]}}}, {percent: 0}]",
	"failureThreshold: {maxFailed: -1, maxFailedPercent: 101}",
	"onFailure: Rollback\ntimezoneAttribute: ''",
	"defaultTimezone: Local",
	"defaultTimezone: agent",
	"maintenanceWindows: [{days: [Monday, 'Mon,'], start: '25:00', end: '7:5', timezone: Europe/Berln}]",
	"maintenanceWindows: [&w {start: '22:00', end: '05:00'}, *w, {days: Mon, start: 2200}]",
	"healthWait: 5m\nhealthWait: 6m\n<<: {a: 1}",
	"? [a]\n: 1",
	"waves: [{name: a, selector: 'r in (x, y), c!=true', by: az, parallelRegions: 2, bake: 25h, maxUnavailable: 25%}]",
	"waves: [{name: a, selector: {matchConditions: 'a=', matchAttributes: {b: c}}, by: Zone, maxUnavailable: 0}]",
	"waves: [{name: a, percent: 100, parallelRegions: 0, maxUnavailable: '3'}]\nmaxUnavailable: 150%",
	"regions: [eu-1, eu-1, '', 7]\ntopology: {regionAttribute: x, zoneAttribute: x}\nonFailure: stop",
	"regions: [eu-1]\ntopology: {zone: z}\nwaves: [{name: a, percent: 100, by: region}]\nonFailure: rollback-all",
}
