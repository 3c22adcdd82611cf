package policy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// The tables are in policytest, which api/schema's test shares: there the
// JSON Schema must agree with the parser on every one of these documents.

// TestParse_Values pins how each field is read when it is valid.
func TestParse_Values(t *testing.T) {
	for _, tt := range policytest.Values {
		p, issues := policy.Parse([]byte(policytest.Doc(tt.Spec)))
		if len(issues) != 0 {
			t.Errorf("%q: issues %v", tt.Spec, issues)
			continue
		}
		if !tt.Check(p.Spec) {
			t.Errorf("%q: wrong value %+v", tt.Spec, p.Spec)
		}
	}
}

func TestParse_ValidDocuments(t *testing.T) {
	for _, tt := range policytest.ValidDocuments {
		p, issues := policy.Parse([]byte(tt.In))
		if len(issues) != 0 || p.Name != tt.Name {
			t.Errorf("%q: name %q, issues %v", tt.In, p.Name, issues)
		}
	}
}

// TestParse_SpecIssues: each row adds one problem to a valid document and
// expects exactly one issue, with its code, path and a part of its message.
func TestParse_SpecIssues(t *testing.T) {
	for _, tt := range policytest.SpecIssues {
		_, issues := policy.Parse([]byte(policytest.Doc(tt.Spec)))
		expectOne(t, tt.Spec, issues, tt.Code, tt.Path, tt.Msg)
	}
}

// TestParse_DocumentIssues covers the document as a whole: YAML, apiVersion,
// kind, metadata.
func TestParse_DocumentIssues(t *testing.T) {
	for _, tt := range policytest.DocumentIssues {
		_, issues := policy.Parse([]byte(tt.In))
		expectOne(t, tt.In, issues, tt.Code, tt.Path, tt.Msg)
	}
}

func TestParse_GateIssues(t *testing.T) {
	for _, tt := range policytest.GateIssues {
		_, issues := policy.Parse([]byte(policytest.Doc(tt.Spec)))
		found := false
		for _, is := range issues {
			if is.Code == tt.Code && is.Path == tt.Path && strings.Contains(is.Message, tt.Msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s at %s with %q, got %v", tt.Spec, tt.Code, tt.Path, tt.Msg, issues)
		}
	}
}

// Every code of the tables is one the package documents, so that a typo in
// a row cannot pass as a code nobody reports.
func TestCases_KnownCodes(t *testing.T) {
	var codes []string
	for _, c := range policytest.SpecIssues {
		codes = append(codes, c.Code)
	}
	for _, c := range policytest.DocumentIssues {
		codes = append(codes, c.Code)
	}
	for _, c := range policytest.GateIssues {
		codes = append(codes, c.Code)
	}
	for _, c := range codes {
		if !slices.Contains(policy.Codes, c) {
			t.Errorf("code %q of a case is not in policy.Codes", c)
		}
	}
}

func expectOne(t *testing.T, in string, issues issue.List, code, path, msg string) {
	t.Helper()
	if len(issues) != 1 {
		t.Errorf("%q: want one issue %s at %s, got %d: %v", issue.Clip(in), code, path, len(issues), issues)
		return
	}
	got := issues[0]
	if got.Code != code || got.Path != path || got.Severity != issue.Error || !strings.Contains(got.Message, msg) {
		t.Errorf("%q:\n got %v\nwant error %s at %s: ...%s...", issue.Clip(in), got, code, path, msg)
	}
}
