package gateread

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// CloudWatch alarms: a stage is blocked while an alarm it names is in state
// ALARM. The alarms are CloudWatch's own verdicts; the gate only lists them.

// alarmNamesPerCall is DescribeAlarms' limit on AlarmNames.
const alarmNamesPerCall = 100

// alarmSelector is one alarm check: the alarms named, or those whose names
// start with a prefix, with the stage's templates substituted.
type alarmSelector struct {
	name     string   // of the Result: the templates as the policy says them
	names    []string // AlarmNames
	prefixes []string // one AlarmNamePrefix a call: DescribeAlarms takes one
}

// alarmSelectors substitutes the alarms' templates for every pass of the
// stage: "errors-{region}" names one alarm per region of the stage. A
// template without {region} or {zone} gives one name however many passes.
func alarmSelectors(a policy.CloudWatchAlarm, req gate.Request) []alarmSelector {
	vars := passVars(req)
	expand := func(tmpls ...string) []string {
		var out []string
		for _, t := range tmpls {
			for _, v := range vars {
				out = append(out, gate.Substitute(t, v))
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var sels []alarmSelector
	if len(a.Names) > 0 {
		sels = append(sels, alarmSelector{name: strings.Join(a.Names, ", "), names: expand(a.Names...)})
	}
	if a.Prefix != "" {
		sels = append(sels, alarmSelector{name: a.Prefix + "*", prefixes: expand(a.Prefix)})
	}
	return sels
}

// passVars are the values of the stage's templates, one set for each
// region and zone of each pass (a pass that is not split has several).
func passVars(req gate.Request) []gate.Vars {
	stage := gate.Vars{Fleet: req.Fleet, Wave: req.Wave, Stage: req.Stage}
	var out []gate.Vars
	for _, p := range req.Passes {
		regions, zones := gate.StageScope([]gate.Pass{p})
		for _, region := range orEmpty(regions) {
			for _, zone := range orEmpty(zones) {
				v := stage
				v.Region, v.Zone = region, zone
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, stage)
	}
	return out
}

func orEmpty(list []string) []string {
	if len(list) == 0 {
		return []string{""}
	}
	return list
}

// readAlarms lists the selected alarms in state ALARM, every page; any
// turns the stage red.
func (r Reader) readAlarms(ctx context.Context, base gate.Result, sel alarmSelector) gate.Result {
	type alarm struct {
		name  string
		since time.Time
	}
	var inAlarm []alarm
	for _, in := range alarmInputs(sel) {
		pages := cloudwatch.NewDescribeAlarmsPaginator(r.CloudWatch, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return failed(base, "cloudwatch DescribeAlarms: "+err.Error())
			}
			for _, a := range page.MetricAlarms {
				if a.StateValue == types.StateValueAlarm {
					inAlarm = append(inAlarm, alarm{aws.ToString(a.AlarmName), aws.ToTime(a.StateUpdatedTimestamp)})
				}
			}
			for _, a := range page.CompositeAlarms {
				if a.StateValue == types.StateValueAlarm {
					inAlarm = append(inAlarm, alarm{aws.ToString(a.AlarmName), aws.ToTime(a.StateUpdatedTimestamp)})
				}
			}
		}
	}
	// The longest in ALARM first, as for alerts.
	slices.SortStableFunc(inAlarm, func(a, b alarm) int {
		return cmp.Or(a.since.Compare(b.since), strings.Compare(a.name, b.name))
	})
	names := make([]string, len(inAlarm))
	for i, a := range inAlarm {
		names[i] = a.name
	}
	res := base
	res.Red, res.Detail = len(names) > 0, gate.Firing("alarm", names)
	return res
}

// alarmInputs are the DescribeAlarms calls of a selector: the names in
// groups of 100, each prefix on its own; metric and composite alarms alike.
func alarmInputs(sel alarmSelector) []*cloudwatch.DescribeAlarmsInput {
	mk := func() *cloudwatch.DescribeAlarmsInput {
		return &cloudwatch.DescribeAlarmsInput{
			StateValue: types.StateValueAlarm,
			AlarmTypes: []types.AlarmType{types.AlarmTypeMetricAlarm, types.AlarmTypeCompositeAlarm},
		}
	}
	var ins []*cloudwatch.DescribeAlarmsInput
	for chunk := range slices.Chunk(sel.names, alarmNamesPerCall) {
		in := mk()
		in.AlarmNames = chunk
		ins = append(ins, in)
	}
	for _, p := range sel.prefixes {
		in := mk()
		in.AlarmNamePrefix = aws.String(p)
		ins = append(ins, in)
	}
	return ins
}
