package iam

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// evaluator is the one real sidecar the tests share. Without node or the
// npm package the tests fail: the evaluator is the point of the package.
var evaluator *Evaluator

func TestMain(m *testing.M) {
	var err error
	evaluator, err = StartEvaluator(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "the IAM evaluator is needed by these tests (node and `npm ci` at the repository root):", err)
		os.Exit(1)
	}
	code := m.Run()
	evaluator.Close()
	os.Exit(code)
}

// testPolicies loads testdata/Test.template.json, a small template in
// CDK's shape.
func testPolicies(t *testing.T) *Policies {
	t.Helper()
	tpl := testTemplate(t)
	p, err := FromTemplate(tpl, evaluator)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testTemplate(t *testing.T) *cfn.Template {
	t.Helper()
	raw, err := os.ReadFile("testdata/Test.template.json")
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := cfn.Parse(raw, "testdata", "Test", cfn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}
