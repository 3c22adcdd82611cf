package policy

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
	"github.com/myriarch/myriarch/core/yamldoc"
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
		{path: "spec.waves[1]", outer: "spec.waves[1]", want: true},         // the same
		{path: "spec.waves[1].percent", outer: "spec.waves[1]", want: true}, // a field inside
		{path: "spec.waves[1][\"x\"]", outer: "spec.waves[1]", want: true},  // a quoted key inside
		{path: "spec.waves[10]", outer: "spec.waves[1]", want: false},       // another index
		{path: "spec.healthWaitX", outer: "spec.healthWait", want: false},   // another key with the same start
		{path: "spec.waves", outer: "spec.waves[1]", want: false},           // the outer one is not within
	}
	for _, tt := range tests {
		if got := within(tt.path, tt.outer); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.path, tt.outer, got, tt.want)
		}
	}
}

// A policy is read by the shared rule (yamldoc.Read, AllowEmpty, and the
// shared alias budget): a trailing "---" is no second document, one with
// content is, and aliases expand to at most yamldoc.Budget values, with
// the message a fleet gives too.
func TestParse_OneDocumentByTheSharedRule(t *testing.T) {
	aliases := func(n int) []byte {
		return doc("x: &r eu-1\nregions: [" + strings.TrimSuffix(strings.Repeat("*r, ", n), ", ") + "]")
	}
	cases := []struct {
		name string
		data []byte
		want string // the message of the one yaml_invalid issue; "" for none
	}{
		{name: "a trailing empty document", data: append(doc(""), "---\n# nothing more\n"...)},
		{name: "a second document", data: append(doc(""), "---\nkind: RolloutPolicy\n"...),
			want: "the file holds more than one YAML document (---); write one RolloutPolicy per file"},
		{name: "a second document that is not YAML", data: append(doc(""), "---\nkind: [\n"...),
			want: "not valid YAML: line 5: did not find expected node content"},
		{name: "aliases past the budget", data: aliases(yamldoc.Budget),
			want: "the document expands to more than 10000 values (through aliases?); write it out plainly"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, issues := Parse(c.data)
			got := issues.WithCode(CodeYAMLInvalid)
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("issues %v, want no yaml_invalid", got)
			case c.want != "" && (len(got) != 1 || got[0].Message != c.want):
				t.Errorf("issues %v, want one yaml_invalid %q", got, c.want)
			}
		})
	}
}
