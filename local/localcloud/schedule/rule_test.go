package schedule

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

func TestParseRate(t *testing.T) {
	cases := []struct {
		expr string
		want time.Duration // 0: invalid
	}{
		{expr: "rate(1 minute)", want: time.Minute},
		{expr: "rate(5 minutes)", want: 5 * time.Minute},
		{expr: "rate(1 hour)", want: time.Hour},
		{expr: "rate(12 hours)", want: 12 * time.Hour},
		{expr: "rate(1 day)", want: 24 * time.Hour},
		{expr: "rate(7 days)", want: 7 * 24 * time.Hour},
		{expr: "rate(1 minutes)", want: 0}, // plural for 1
		{expr: "rate(5 minute)", want: 0},  // singular for 5
		{expr: "rate(0 hours)", want: 0},
		{expr: "rate(-1 hours)", want: 0},
		{expr: "rate(1 second)", want: 0},
		{expr: "rate(1.5 hours)", want: 0},
		{expr: "cron(0 12 * * ? *)", want: 0},
	}
	for _, c := range cases {
		got, err := ParseRate(c.expr)
		if got != c.want || (err == nil) != (c.want != 0) {
			t.Errorf("%s: %s, %v; want %s", c.expr, got, err, c.want)
		}
	}
}

func loadTemplate(t *testing.T, name string) *cfn.Template {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".template.json"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := cfn.Parse(raw, t.TempDir(), "S", cfn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestRulesFrom(t *testing.T) {
	rules, err := RulesFrom(loadTemplate(t, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{
		LogicalID: "PlannerSchedule", Name: "S-PlannerSchedule", ARN: "arn:aws:events:us-east-1:123456789012:rule/S-PlannerSchedule",
		Period: time.Minute, Enabled: true,
		Targets: []Target{{ID: "Target0", Arn: "arn:aws:lambda:us-east-1:123456789012:function:s-planner", Retry: RetryPolicy{MaxRetries: 0, MaxEventAge: time.Minute}}},
	}, {
		LogicalID: "ReleaseSchedule", Name: "S-ReleaseSchedule", ARN: "arn:aws:events:us-east-1:123456789012:rule/S-ReleaseSchedule",
		Period: 24 * time.Hour,
		// Without a RetryPolicy: EventBridge's 185 retries over 24 hours.
		Targets: []Target{{ID: "Target0", Arn: "arn:aws:lambda:us-east-1:123456789012:function:s-releases", Input: `{"refresh":true}`, Retry: RetryPolicy{MaxRetries: 185, MaxEventAge: 24 * time.Hour}}},
	}}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules\n got %+v\nwant %+v", rules, want)
	}
}

func TestRulesFrom_Refuses(t *testing.T) {
	_, err := RulesFrom(loadTemplate(t, "refused"))
	for _, w := range []string{
		`rule Cron: ScheduleExpression "cron(0 12 * * ? *)": cron expressions are not emulated`,
		`rule Plural: ScheduleExpression "rate(1 minutes)"`,
		`rule Queue: target Q: "arn:aws:sqs:us-east-1:123456789012:q": only Lambda function targets`,
		`rule Transformer: target T: InputTransformer is not emulated`,
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%v\nwant an error with %q", err, w)
		}
	}
}
