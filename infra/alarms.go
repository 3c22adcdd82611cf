package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// newAlarms raises an alarm on any Lambda error or throttle, any failed
// rollout execution (a rolled-back rollout ends in a Fail state too, on
// purpose: someone should look), any agent change or notification given up
// on, notifications published more than notificationsLate after they were
// written, and a gateway task failing its health check (when the stack
// runs the gateway). They notify the configured SNS topic, if any.
//
// Exception: a function with reserved concurrency (the planner, 1) is
// throttled whenever the api's synchronous "plan this fleet now" meets the
// scheduled run; that is expected once in a while, so its throttle alarm
// wants plannerCollisions of them in five minutes.
// plannerCollisions is how many throttles of the planner in five minutes
// are more than the api's synchronous runs meeting the scheduled one.
const plannerCollisions = 5

// notificationsLate is the age of the oldest record of the outbox's stream
// that the notify function handles (its IteratorAge) beyond which the
// notifications are late: the bus refuses them, or a record blocks its
// shard.
const notificationsLate = 5 * time.Minute

func newAlarms(scope constructs.Construct, c Config, fns Functions, sm awsstepfunctions.StateMachine, dlq, notifyDLQ awssqs.Queue, gw *Gateway) []awscloudwatch.Alarm {
	fiveMinutes := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	type watch struct {
		id, what  string
		metric    awscloudwatch.IMetric
		threshold int
	}
	var watches []watch
	for _, f := range functionSpecs {
		fn := fns[f.Name]
		throttles := 1
		if f.ReservedConcurrency > 0 {
			throttles = plannerCollisions
		}
		watches = append(watches,
			watch{"Errors-" + f.Name, "the " + f.Name + " function failed", fn.MetricErrors(fiveMinutes), 1},
			watch{"Throttles-" + f.Name, "the " + f.Name + " function was throttled", fn.MetricThrottles(fiveMinutes), throttles})
	}
	watches = append(watches,
		watch{"RolloutExecutionsFailed", "a rollout execution failed (engine error or rolled back)", sm.MetricFailed(fiveMinutes), 1},
		watch{"RolloutExecutionsTimedOut", "a rollout execution timed out", sm.MetricTimedOut(fiveMinutes), 1},
		watch{"AgentEventsGivenUp", "agent changes were given up on after retries (see the dead-letter queue)",
			dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum")}), 1},
		watch{"NotificationsGivenUp", "rollout notifications were not published within a day (see the dead-letter queue; the feed still lists them)",
			notifyDLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum")}), 1},
		watch{"NotificationsLate", "rollout notifications are published more than 5 minutes late",
			fns[fnNotify].Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum")}),
			int(notificationsLate.Milliseconds())},
	)
	if gw != nil {
		watches = append(watches, watch{"GatewayUnhealthyTasks", "a gateway task fails its /healthz check",
			gw.TargetGroup.Metrics().UnHealthyHostCount(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")}), 1})
	}
	var topic awssns.ITopic
	if c.AlarmTopicArn != "" {
		topic = awssns.Topic_FromTopicArn(scope, jsii.String("AlarmTopic"), jsii.String(c.AlarmTopicArn))
	}
	alarms := make([]awscloudwatch.Alarm, 0, len(watches))
	for _, w := range watches {
		a := awscloudwatch.NewAlarm(scope, jsii.String("Alarm-"+w.id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Myriarch " + c.Stage + ": " + w.what),
			Metric:             w.metric,
			Threshold:          jsii.Number(float64(w.threshold)),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if topic != nil {
			a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
			a.AddOkAction(awscloudwatchactions.NewSnsAction(topic))
		}
		alarms = append(alarms, a)
	}
	return alarms
}
