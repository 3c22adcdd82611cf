package fleet_test

import (
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/fleet/fleettest"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/selector"
)

// The documents are in fleettest, which api/schema's test shares: there the
// JSON Schema must agree with Parse and Validate on every one of them.

func TestParse_FullFleet(t *testing.T) {
	got, issues := fleet.Parse([]byte(fleettest.Full))
	want := fleet.Fleet{
		Name:      "edge-gateway",
		Collector: fleet.Collector{Distribution: "otelcol-contrib", Version: "0.161.0"}, // leading v trimmed
		Update: fleet.Update{Executor: fleet.ExecutorWebhook, ExecutorRef: "ansible-hook", Selection: fleet.Frame{
			Enabled: true, VersionRange: ">=0.161.0, <=0.162.0", AllowDowngrade: true, RequireReason: true, RolloutPolicy: "ui-canary",
		}},
		Rollout:  fleet.RolloutPolicies{ConfigPolicy: "cfg", VersionPolicy: "gateway-version"},
		Selector: selector.Selector{MatchAttributes: map[string]string{"labels.role": "gateway", "site.region": "eu"}},
		Config:   fleet.Config{Hash: "sha256:abc"},
	}
	if len(issues) != 0 {
		t.Fatalf("Parse issues = %v, want none", issues)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParse_Defaults(t *testing.T) {
	got, issues := fleet.Parse([]byte(fleettest.Defaults))
	if len(issues) != 0 {
		t.Fatalf("Parse issues = %v, want none", issues)
	}
	if got.Update.Executor != fleet.ExecutorNone || got.Update.Selection.Enabled || got.Update.Selection.AllowDowngrade || got.Update.Selection.RequireReason {
		t.Errorf("defaults = %+v, want executor none and a disabled frame", got.Update)
	}
}

func TestParse_Issues(t *testing.T) {
	for _, tt := range fleettest.ParseIssues {
		t.Run(tt.Name, func(t *testing.T) {
			_, issues := fleet.Parse([]byte(tt.Doc))
			if len(issues) != 1 || issues[0] != tt.Want {
				t.Errorf("Parse issues =\n%v\nwant exactly\n%v", issues, tt.Want)
			}
		})
	}
}

// TestValidate: each document reads without an issue, and Validate reports
// exactly what the row says.
func TestValidate(t *testing.T) {
	for _, tt := range fleettest.ValidateCases {
		t.Run(tt.Name, func(t *testing.T) {
			f, parsed := fleet.Parse([]byte(tt.Doc))
			if len(parsed) != 0 {
				t.Fatalf("Parse issues = %v, want none", parsed)
			}
			if got := fleet.Validate(f, fleettest.PolicyExists); !reflect.DeepEqual(got, tt.Want) {
				t.Errorf("Validate =\n%v\nwant\n%v", got, tt.Want)
			}
		})
	}
}

// The name is a path segment of the API and a file name: a DNS label.
func TestValidate_Names(t *testing.T) {
	for _, tt := range fleettest.Names {
		f, parsed := fleet.Parse([]byte(tt.Doc()))
		if len(parsed) != 0 || f.Name != tt.Name {
			t.Fatalf("name %q: Parse read %q, issues %v", tt.Name, f.Name, parsed)
		}
		got := fleet.Validate(f, fleettest.PolicyExists).WithCode(fleet.CodeNameInvalid)
		if (len(got) == 0) != tt.Valid {
			t.Errorf("name %q: issues %v, want valid %v", tt.Name, got, tt.Valid)
		}
		if len(got) == 1 && (got[0].Path != "metadata.name" || got[0].Severity != issue.Error) {
			t.Errorf("name %q: issue %+v, want an error at metadata.name", tt.Name, got[0])
		}
	}
}
