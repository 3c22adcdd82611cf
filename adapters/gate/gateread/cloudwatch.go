package gateread

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

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
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
)

// queryCloudWatch reads the metric over [Now-Lookback, Now] and judges its
// most recent datapoint: a gate asks how the stage is now, not how it was on
// average over the window.
func (r Reader) queryCloudWatch(ctx context.Context, m policy.Metric, v gate.Vars, scope string) gate.Result {
	base := gate.Result{Kind: gate.KindMetric, Name: m.Name, Scope: scope}
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
	return gate.Judge(m.Name, scope, value, ok, m.Min, m.Max)
}

// metricDataQuery is the query of a metric: its Query as a metric-math
// expression (SEARCH, a Metrics Insights SELECT) or its single CloudWatch
// metric, templates substituted.
func metricDataQuery(m policy.Metric, v gate.Vars) (types.MetricDataQuery, error) {
	q := types.MetricDataQuery{Id: aws.String(cloudWatchQueryID), ReturnData: aws.Bool(true)}
	switch cw := m.CloudWatch; {
	case cw != nil && m.Query != "":
		return q, fmt.Errorf("metric %s: query and cloudwatch are exclusive", m.Name)
	case cw != nil:
		dims := make([]types.Dimension, 0, len(cw.Dimensions))
		for name, tmpl := range cw.Dimensions {
			dims = append(dims, types.Dimension{Name: aws.String(name), Value: aws.String(gate.Substitute(tmpl, v))})
		}
		slices.SortFunc(dims, func(a, b types.Dimension) int { return strings.Compare(*a.Name, *b.Name) })
		q.MetricStat = &types.MetricStat{
			Metric: &types.Metric{Namespace: aws.String(cw.Namespace), MetricName: aws.String(cw.MetricName), Dimensions: dims},
			Period: periodSeconds(cw.Period),
			Stat:   aws.String(cmp.Or(cw.Stat, defaultCloudWatchStat)),
		}
	case m.Query != "":
		q.Expression = aws.String(gate.Substitute(m.Query, v))
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
