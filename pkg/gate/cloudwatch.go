package gate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/myriarch/myriarch/pkg/policy"
)

// CloudWatchAPI is what the gate asks of CloudWatch: metric data and
// alarms. *cloudwatch.Client has it.
type CloudWatchAPI interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
	DescribeAlarms(ctx context.Context, in *cloudwatch.DescribeAlarmsInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error)
}

var _ CloudWatchAPI = (*cloudwatch.Client)(nil)

const (
	// cloudWatchQueryID names the one query of a GetMetricData call (an id
	// starts with a lower-case letter).
	cloudWatchQueryID = "gate"
	// defaultCloudWatchPeriod is the period of a metric without one, and of
	// every expression: the policy has no period for Query.
	defaultCloudWatchPeriod = time.Minute
	defaultCloudWatchStat   = "Average"
	// alarmNamesPerCall is DescribeAlarms' limit on AlarmNames.
	alarmNamesPerCall = 100
)

// queryCloudWatch reads the metric over [Now-Lookback, Now] and judges its
// most recent datapoint: a gate asks how the stage is now, not how it was on
// average over the window.
func (r Reader) queryCloudWatch(ctx context.Context, m policy.Metric, v Vars, scope string) Result {
	base := Result{Kind: KindMetric, Name: m.Name, Scope: scope}
	q, err := metricDataQuery(m, v)
	if err != nil {
		return failed(base, err.Error())
	}
	now := r.Now()
	out, err := r.CloudWatch.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime:         aws.Time(now.Add(-cmp.Or(m.Lookback, policy.DefaultMetricLookback))),
		EndTime:           aws.Time(now),
		MetricDataQueries: []types.MetricDataQuery{q},
		// The newest datapoints come first, so the first page holds the
		// most recent one even when the window has more pages.
		ScanBy: types.ScanByTimestampDescending,
	})
	if err != nil {
		return failed(base, "cloudwatch GetMetricData: "+err.Error())
	}
	value, ok, err := latestDatapoint(out.MetricDataResults, cloudWatchQueryID)
	if err != nil {
		return failed(base, "cloudwatch GetMetricData: "+err.Error())
	}
	return Judge(m.Name, scope, value, ok, m.Min, m.Max)
}

// metricDataQuery is the query of a metric: its Query as a metric-math
// expression (SEARCH, a Metrics Insights SELECT) or its single CloudWatch
// metric, templates substituted.
func metricDataQuery(m policy.Metric, v Vars) (types.MetricDataQuery, error) {
	q := types.MetricDataQuery{Id: aws.String(cloudWatchQueryID), ReturnData: aws.Bool(true)}
	switch cw := m.CloudWatch; {
	case cw != nil && m.Query != "":
		return q, fmt.Errorf("metric %s: query and cloudwatch are exclusive", m.Name)
	case cw != nil:
		dims := make([]types.Dimension, 0, len(cw.Dimensions))
		for name, tmpl := range cw.Dimensions {
			dims = append(dims, types.Dimension{Name: aws.String(name), Value: aws.String(Substitute(tmpl, v))})
		}
		slices.SortFunc(dims, func(a, b types.Dimension) int { return strings.Compare(*a.Name, *b.Name) })
		q.MetricStat = &types.MetricStat{
			Metric: &types.Metric{Namespace: aws.String(cw.Namespace), MetricName: aws.String(cw.MetricName), Dimensions: dims},
			Period: periodSeconds(cw.Period),
			Stat:   aws.String(cmp.Or(cw.Stat, defaultCloudWatchStat)),
		}
	case m.Query != "":
		q.Expression = aws.String(Substitute(m.Query, v))
		q.Period = periodSeconds(0)
	default:
		return q, fmt.Errorf("metric %s: neither query nor cloudwatch", m.Name)
	}
	return q, nil
}

// periodSeconds: CloudWatch counts periods in whole seconds, at least one.
func periodSeconds(d time.Duration) *int32 {
	d = cmp.Or(d, defaultCloudWatchPeriod)
	return aws.Int32(int32(max(1, d/time.Second)))
}

// latestDatapoint is the value of the newest datapoint of the query id.
// CloudWatch reports a query it could not run in its StatusCode, not as an
// error of the call.
func latestDatapoint(results []types.MetricDataResult, id string) (value float64, ok bool, err error) {
	for _, res := range results {
		if aws.ToString(res.Id) != id {
			continue
		}
		if res.StatusCode == types.StatusCodeInternalError || res.StatusCode == types.StatusCodeForbidden {
			return 0, false, fmt.Errorf("status %s: %s", res.StatusCode, messages(res.Messages))
		}
		newest := -1
		for i, ts := range res.Timestamps {
			if i < len(res.Values) && !math.IsNaN(res.Values[i]) && (newest < 0 || ts.After(res.Timestamps[newest])) {
				newest = i
			}
		}
		if newest < 0 {
			return 0, false, nil
		}
		return res.Values[newest], true, nil
	}
	return 0, false, nil
}

func messages(ms []types.MessageData) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%s (%s)", aws.ToString(m.Value), aws.ToString(m.Code)))
	}
	if len(s) == 0 {
		return "no message"
	}
	return strings.Join(s, "; ")
}

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
func alarmSelectors(a policy.CloudWatchAlarm, req Request) []alarmSelector {
	vars := passVars(req)
	expand := func(tmpls ...string) []string {
		var out []string
		for _, t := range tmpls {
			for _, v := range vars {
				out = append(out, Substitute(t, v))
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
func passVars(req Request) []Vars {
	stage := Vars{Fleet: req.Fleet, Wave: req.Wave, Stage: req.Stage}
	var out []Vars
	for _, p := range req.Passes {
		regions, zones := stageScope([]Pass{p})
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
func (r Reader) readAlarms(ctx context.Context, base Result, sel alarmSelector) Result {
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
	res.Red, res.Detail = len(names) > 0, firing("alarm", names)
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
