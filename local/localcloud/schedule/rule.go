package schedule

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// Rule is one scheduled rule.
type Rule struct {
	LogicalID, Name, ARN string
	Period               time.Duration // its rate
	Enabled              bool
	Targets              []Target
}

// Target is a rule's target: a Lambda function.
type Target struct {
	ID, Arn string
	Input   string // a constant JSON that replaces the event, when set
	Retry   RetryPolicy
}

// RetryPolicy is how long EventBridge keeps trying to deliver an event to
// a target that refuses it.
type RetryPolicy struct {
	MaxRetries  int           // default 185
	MaxEventAge time.Duration // default 24 h
}

// EventBridge's defaults, for a target without a RetryPolicy.
const (
	defaultMaxRetries  = 185
	defaultMaxEventAge = 24 * time.Hour
)

// RulesFrom reads every AWS::Events::Rule with a ScheduleExpression.
// An expression, a target or a setting the local cloud does not emulate
// is an error.
func RulesFrom(t *cfn.Template) ([]Rule, error) {
	var rules []Rule
	var errs []error
	for _, id := range t.OfType("AWS::Events::Rule") {
		p := t.Resources[id].Properties
		expr, ok := p["ScheduleExpression"].(string)
		if !ok {
			continue // an event pattern rule: its bus's
		}
		r, err := ruleFrom(t, id, expr, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s: %w", id, err))
			continue
		}
		rules = append(rules, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rules, nil
}

func ruleFrom(t *cfn.Template, id, expr string, p map[string]any) (Rule, error) {
	period, err := ParseRate(expr)
	if err != nil {
		return Rule{}, err
	}
	r := Rule{LogicalID: id, Name: t.Physical(id), ARN: t.Arn(id), Period: period}
	switch state := p["State"]; state {
	case "ENABLED", nil: // CloudFormation's default is ENABLED
		r.Enabled = true
	case "DISABLED":
	default:
		return Rule{}, fmt.Errorf("State %v is not emulated", state)
	}
	targets, _ := p["Targets"].([]any)
	for _, raw := range targets {
		tg, err := targetFrom(raw.(map[string]any))
		if err != nil {
			return Rule{}, err
		}
		r.Targets = append(r.Targets, tg)
	}
	return r, nil
}

func targetFrom(p map[string]any) (Target, error) {
	tg := Target{Retry: RetryPolicy{MaxRetries: defaultMaxRetries, MaxEventAge: defaultMaxEventAge}}
	tg.ID, _ = p["Id"].(string)
	tg.Arn, _ = p["Arn"].(string)
	tg.Input, _ = p["Input"].(string)
	if !strings.Contains(tg.Arn, ":lambda:") || !strings.Contains(tg.Arn, ":function:") {
		return Target{}, fmt.Errorf("target %s: %q: only Lambda function targets are emulated", tg.ID, tg.Arn)
	}
	for _, k := range []string{"InputPath", "InputTransformer", "DeadLetterConfig", "RoleArn"} {
		if _, ok := p[k]; ok {
			return Target{}, fmt.Errorf("target %s: %s is not emulated", tg.ID, k)
		}
	}
	if rp, ok := p["RetryPolicy"].(map[string]any); ok {
		if n, ok := rp["MaximumRetryAttempts"].(float64); ok {
			tg.Retry.MaxRetries = int(n)
		}
		if s, ok := rp["MaximumEventAgeInSeconds"].(float64); ok {
			tg.Retry.MaxEventAge = time.Duration(s) * time.Second
		}
	}
	return tg, nil
}

// rateExpr is EventBridge's rate expression: a positive whole number and a
// unit, singular for 1 and plural otherwise.
var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

var units = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}

// ParseRate reads rate(N unit): rate(1 minute) is a minute, rate(5
// minutes) five; rate(1 minutes) and rate(0 hours) are invalid, as for
// EventBridge. cron(...) is refused.
func ParseRate(expr string) (time.Duration, error) {
	if strings.HasPrefix(expr, "cron(") {
		return 0, fmt.Errorf("ScheduleExpression %q: cron expressions are not emulated by the local cloud (use rate(...))", expr)
	}
	m := rateExpr.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("ScheduleExpression %q is not rate(N minute|minutes|hour|hours|day|days)", expr)
	}
	n, err := strconv.Atoi(m[1])
	unit := strings.TrimSuffix(m[2], "s")
	plural := unit != m[2]
	if err != nil || n < 1 || (n == 1) == plural {
		return 0, fmt.Errorf("ScheduleExpression %q: the value must be a positive integer, with a singular unit for 1 and plural otherwise", expr)
	}
	return time.Duration(n) * units[unit], nil
}
