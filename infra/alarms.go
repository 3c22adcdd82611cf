package main

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/watchdog"
)

// newAlarms raises an alarm on any Lambda error or throttle, any failed or
// timed-out rollout execution (a rolled-back rollout ends in a Fail state
// too, on purpose: someone should look), any agent change or notification
// given up on, notifications published more than notificationsLate after
// they were written, a gateway task failing its health check (when the
// stack runs the gateway), a rollout that has waited for approval longer
// than approvalWaitAlarm, and the watchdog starting an execution for a
// stranded rollout. They notify the configured SNS topic, if any.
//
// Each alarm is named myriarch-<stage>-<what>, so that the page says what
// broke, and its description says what to look at and what to do.
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

// alarmPeriod is the period of every alarm but the gateway's (a minute)
// and the approval wait's (approvalWaitPeriod).
const alarmPeriod = 5 * time.Minute

// approvalWaitPeriod is the period of the approval-wait alarm: two runs of
// the watchdog, so that every period holds a measurement however a run's
// time shifts, and a missing one cannot turn the alarm OK and back.
const approvalWaitPeriod = 2 * watchdogEvery

// alarm is one alarm of the stack: its name after myriarch-<stage>-, what
// it watches and when it fires, and what the on-call engineer reads.
type alarm struct {
	id, name, description string
	metric                awscloudwatch.IMetric
	threshold             float64
	comparison            awscloudwatch.ComparisonOperator // default: >= threshold
}

func alarmName(c Config, name string) string { return "myriarch-" + c.Stage + "-" + name }

func newAlarms(scope constructs.Construct, c Config, fns Functions, sm awsstepfunctions.StateMachine, dlq, notifyDLQ awssqs.Queue, gw *Gateway) []awscloudwatch.Alarm {
	every := func(d time.Duration, statistic string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: awscdk.Duration_Seconds(jsii.Number(d.Seconds())), Statistic: jsii.String(statistic)}
	}
	sum, maximum := every(alarmPeriod, "Sum"), every(alarmPeriod, "Maximum")
	stateMachine := rolloutStateMachineName(c)
	var alarms []alarm
	for _, f := range functionSpecs {
		fn, name := fns[f.Name], functionName(c, f.Name)
		throttles := 1
		if f.ReservedConcurrency > 0 {
			throttles = plannerCollisions
		}
		alarms = append(alarms,
			alarm{id: "Errors-" + f.Name, name: f.Name + "-lambda-errors",
				description: fmt.Sprintf("The %s Lambda (%s) returned an error in the last 5 minutes. %s Read its errors in the log group /aws/lambda/%s (level ERROR) and its X-Ray traces.",
					f.Name, name, failureImpact[f.Name], name),
				metric: fn.MetricErrors(sum), threshold: 1},
			alarm{id: "Throttles-" + f.Name, name: f.Name + "-lambda-throttles",
				description: fmt.Sprintf("Lambda throttled %s at least %d times in 5 minutes: the account's or the function's concurrency is exhausted. %s Check the account's concurrent executions (Service Quotas, Lambda) and what else runs in it.",
					name, throttles, failureImpact[f.Name]),
				metric: fn.MetricThrottles(sum), threshold: float64(throttles)})
	}
	alarms = append(alarms,
		alarm{id: "RolloutExecutionsFailed", name: "rollout-executions-failed",
			description: fmt.Sprintf("An execution of the rollout state machine %s failed: the rollout was rolled back (on purpose: look why), or an engine task failed after its retries and the rollout is now failed, waiting for an operator. Open the failed execution in the Step Functions console for the rollout id and the error, then `myrctl rollouts get <id>`; resume (`myrctl rollouts resume <id>`) or abort it once the cause is fixed.", stateMachine),
			metric:      sm.MetricFailed(sum), threshold: 1},
		alarm{id: "RolloutExecutionsTimedOut", name: "rollout-executions-timed-out",
			description: fmt.Sprintf("An execution of the rollout state machine %s timed out; its rollout is not driven until a new execution runs (the watchdog starts one within minutes). Open the execution in the Step Functions console and check the rollout with `myrctl rollouts get <id>`.", stateMachine),
			metric:      sm.MetricTimedOut(sum), threshold: 1},
		alarm{id: "AgentEventsGivenUp", name: "agent-events-dead-letters",
			description: fmt.Sprintf("Changes of agents were given up on after %d retries and sit in the agent events' dead-letter queue: their agents were not assigned or evaluated at once (the planner's minute and the engine's next pass catch up). Read the errors of the agent-event function (/aws/lambda/%s), fix the cause, then look at and purge the queue's messages.", streamRetries, functionName(c, fnAgentEvent)),
			metric:      dlq.MetricApproximateNumberOfMessagesVisible(maximum), threshold: 1},
		alarm{id: "NotificationsGivenUp", name: "notifications-dead-letters",
			description: fmt.Sprintf("Rollout notifications were not published on the bus myriarch-%s within a day and sit in the notifications' dead-letter queue; subscribers missed them (the API's feed, `myrctl events`, still lists them for 14 days). Read the errors of the notify function (/aws/lambda/%s) and tell the subscribers what they missed.", c.Stage, functionName(c, fnNotify)),
			metric:      notifyDLQ.MetricApproximateNumberOfMessagesVisible(maximum), threshold: 1},
		alarm{id: "NotificationsLate", name: "notifications-late",
			description: fmt.Sprintf("Rollout notifications are published more than %v after they were written (the notify function's iterator age): the bus refuses them, or a record blocks its shard; after a day they go to the dead-letter queue. Read the errors of the notify function (/aws/lambda/%s).", notificationsLate, functionName(c, fnNotify)),
			metric:      fns[fnNotify].Metric(jsii.String("IteratorAge"), maximum), threshold: float64(notificationsLate.Milliseconds())},
		alarm{id: "RolloutWaitingForApprovalTooLong", name: "rollout-waiting-for-approval-too-long",
			description: fmt.Sprintf("A rollout has waited for an approval for more than %v (the watchdog's %s, namespace %s): nothing moves until someone approves or rejects the wave. Find it with `myrctl rollouts list` (status waiting_approval), then `myrctl rollouts approve <id> --wave <n>` or `myrctl rollouts reject <id> --wave <n>`; the watchdog's log line (/aws/lambda/%s) names the rollout as OldestApprovalRollout.",
				c.ApprovalWaitAlarm, watchdog.MetricOldestApproval, watchdog.MetricNamespace, functionName(c, fnWatchdog)),
			metric:     watchdogMetric(c, watchdog.MetricOldestApproval, every(approvalWaitPeriod, "Maximum")),
			threshold:  c.ApprovalWaitAlarm.Seconds(),
			comparison: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD},
		alarm{id: "WatchdogResumedRollouts", name: "watchdog-resumed-rollouts",
			description: fmt.Sprintf("The watchdog started a new execution for at least one active rollout whose execution was missing or had ended (%s): the rollout runs again, but something stopped it. Its warning in /aws/lambda/%s names the rollout and why; check the rollout's earlier executions in the Step Functions console (%s) and the engine's errors. After rollout-executions-failed this is expected: a failed rollout waits for an operator in its new execution.",
				watchdog.MetricResumed, functionName(c, fnWatchdog), stateMachine),
			metric: watchdogMetric(c, watchdog.MetricResumed, sum), threshold: 1},
	)
	if gw != nil {
		alarms = append(alarms, alarm{id: "GatewayUnhealthyTasks", name: "gateway-unhealthy-tasks",
			description: "A task of the OpAMP gateway fails the load balancer's /healthz check (within a minute); agents connected to it reconnect to the others. Look at the service's events and the tasks' logs in the ECS console (outputs GatewayClusterName, GatewayServiceName); a deployment that keeps failing is rolled back by its circuit breaker.",
			metric:      gw.TargetGroup.Metrics().UnHealthyHostCount(every(time.Minute, "Maximum")), threshold: 1})
	}
	var topic awssns.ITopic
	if c.AlarmTopicArn != "" {
		topic = awssns.Topic_FromTopicArn(scope, jsii.String("AlarmTopic"), jsii.String(c.AlarmTopicArn))
	}
	out := make([]awscloudwatch.Alarm, 0, len(alarms))
	for _, a := range alarms {
		comparison := a.comparison
		if comparison == "" {
			comparison = awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
		}
		cw := awscloudwatch.NewAlarm(scope, jsii.String("Alarm-"+a.id), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(alarmName(c, a.name)),
			AlarmDescription:   jsii.String(a.description),
			Metric:             a.metric,
			Threshold:          jsii.Number(a.threshold),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: comparison,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if topic != nil {
			cw.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
			cw.AddOkAction(awscloudwatchactions.NewSnsAction(topic))
		}
		out = append(out, cw)
	}
	return out
}

// watchdogMetric is one of the metrics the watchdog writes in embedded
// metric format: namespace Myriarch, dimension Stage (adapters/watchdog).
func watchdogMetric(c Config, name string, opts *awscloudwatch.MetricOptions) awscloudwatch.IMetric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(watchdog.MetricNamespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{"Stage": jsii.String(c.Stage)},
		Period:        opts.Period,
		Statistic:     opts.Statistic,
	})
}

// failureImpact says, per function, what its failures mean and how they
// are caught up: the part of an alarm's description that differs.
var failureImpact = map[string]string{
	fnEngine:     "It runs the tasks of the rollout state machine: a failed task is retried, then its rollout is recorded as failed (see rollout-executions-failed).",
	fnPlanner:    "It plans every fleet each minute and when the API asks: no new rollout starts while it fails; the next successful run catches up.",
	fnAgentEvent: "It handles the agents table's stream: a failed batch is retried, halved, then given up to the dead-letter queue (see agent-events-dead-letters).",
	fnAPI:        "Operators and myrctl got server errors (5xx) from the API.",
	fnAuthorizer: "API Gateway could not check tokens: operators' requests were refused.",
	fnReleases:   "The daily release refresh did not finish; Lambda retries it twice, and the next day's run catches up.",
	fnNotify:     "It publishes rollout notifications from the events table's stream: a failed batch is retried for up to a day (see notifications-late).",
	fnWatchdog:   "It checks every 5 minutes that each active rollout has a running execution: while it fails, a stranded rollout stays stranded and the approval-wait alarm has no data.",
}
