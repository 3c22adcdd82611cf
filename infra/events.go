package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/notify"
)

// streamRetries bounds how often a failing batch of agent changes is
// retried (halved each time) before its records go to the dead-letter queue;
// the planner and the engine's next pass catch up on what was skipped.
const streamRetries = 10

// agentEventBatch is the most agent changes of one agent-event invocation:
// fewer invocations for a wave's backlog, each a pass over its own agents'
// targets (enginetask.Evaluator.EvaluateAgents), within Lambda's 6 MB payload (a
// change carries the old and the new image of an agent item, a few KB each
// in Lambda's JSON). Without a batching window Lambda does not wait to fill
// a batch. The local stack's poller hands over as many
// (streams.DefaultMaxBatch).
const agentEventBatch = 500

// agentEventLanes is how many batches of one shard of the agents' stream
// are handled at once (ParallelizationFactor; the local poller's Lanes): a
// wave's reports are decided by passes side by side instead of queueing
// behind one pass at a time, while the changes of one agent stay in order
// (Lambda keeps the records of a partition key in one batch sequence).
// Targeted passes of different agents do not conflict; whole passes that
// race each other re-read and decide again (conditional writes).
const agentEventLanes = 4

// connectAgentEvents feeds every change of an agent item to the
// agent-event function within about a second (no batching window), newest
// changes only (a new deployment does not replay the table's history).
func connectAgentEvents(scope constructs.Construct, fns Functions, ts Tables) awssqs.Queue {
	return connectStream(scope, "AgentEventsFailed", fns[fnAgentEvent], ts[tables.Agents.Name], awslambdaeventsources.DynamoEventSourceProps{
		// A backlog in few invocations, each one pass per rollout over the
		// batch's targets. Without a batching window a quiet stream still
		// delivers a single change at once.
		BatchSize:             jsii.Number(agentEventBatch),
		ParallelizationFactor: jsii.Number(agentEventLanes),
		StartingPosition:      awslambda.StartingPosition_LATEST,
		RetryAttempts:         jsii.Number(streamRetries),
	})
}

// connectStream has fn read table's stream as props say, with what every
// stream consumer here shares: batches of up to 100 unless props say, a failed batch halved
// to find the record that fails, the function reporting the first record
// it did not handle, and the records given up on recorded in a dead-letter
// queue (dlqID, kept 14 days), which it returns.
func connectStream(scope constructs.Construct, dlqID string, fn awslambda.Function, table awsdynamodb.Table, props awslambdaeventsources.DynamoEventSourceProps) awssqs.Queue {
	dlq := awssqs.NewQueue(scope, jsii.String(dlqID), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true), // a request without TLS is refused
	})
	if props.BatchSize == nil {
		props.BatchSize = jsii.Number(100)
	}
	props.BisectBatchOnError = jsii.Bool(true)
	props.ReportBatchItemFailures = jsii.Bool(true)
	props.OnFailure = awslambdaeventsources.NewSqsDlq(dlq)
	fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(table, &props))
	return dlq
}

// schedulePlanner runs the planner every minute (docs/rollouts.md, "When rollouts arise").
// A missed tick is not retried: the next one comes a minute later. That
// holds twice: for EventBridge's delivery (the rule target's retry policy)
// and for Lambda's own queue of asynchronous invocations, whose defaults
// (2 retries, events kept 6 hours) would run a failing tick three times and
// queue ticks behind the planner's single reserved execution.
func schedulePlanner(scope constructs.Construct, fns Functions) awsevents.Rule {
	noAsyncRetries(fns[fnPlanner], time.Minute)
	return awsevents.NewRule(scope, jsii.String("PlannerSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Myriarch planner: every minute"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fns[fnPlanner], &awseventstargets.LambdaFunctionProps{
			RetryAttempts: jsii.Number(0),
			MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(1)),
		})},
	})
}

// watchdogEvery is how often the watchdog looks for stranded rollouts and
// measures the longest approval wait: the alarms on its metrics read
// periods of at least this length.
const watchdogEvery = 5 * time.Minute

// scheduleWatchdog runs the watchdog every watchdogEvery. A missed run is
// not retried: the next one comes five minutes later, and it is the same
// check.
func scheduleWatchdog(scope constructs.Construct, fns Functions) awsevents.Rule {
	noAsyncRetries(fns[fnWatchdog], watchdogEvery)
	return awsevents.NewRule(scope, jsii.String("WatchdogSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Myriarch watchdog: every 5 minutes"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(watchdogEvery.Minutes()))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fns[fnWatchdog], &awseventstargets.LambdaFunctionProps{
			RetryAttempts: jsii.Number(0),
			MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(watchdogEvery.Minutes())),
		})},
	})
}

// noAsyncRetries sets Lambda's asynchronous invocation of a scheduled
// function: no retry of a failed run, and an event older than the schedule's
// period is dropped (the next run does the same work).
func noAsyncRetries(fn awslambda.Function, period time.Duration) {
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		RetryAttempts: jsii.Number(0),
		MaxEventAge:   awscdk.Duration_Seconds(jsii.Number(period.Seconds())),
	})
}

// scheduleReleaseRefresh runs the release refresh once a day. The rule is
// always deployed, but disabled unless the deployment names distributions
// to refresh (releaseRefresh): the refresh asks GitHub, which a deployment
// may not want to reach, and a disabled rule costs nothing. A run that
// fails is retried by Lambda's asynchronous invocation (twice, minutes
// apart); beyond that the next day's run catches up, since a refresh is
// idempotent.
func scheduleReleaseRefresh(scope constructs.Construct, c Config, fns Functions) awsevents.Rule {
	return awsevents.NewRule(scope, jsii.String("ReleaseRefreshSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Myriarch release refresh: daily, when releaseRefresh names distributions"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Days(jsii.Number(1))),
		Enabled:     jsii.Bool(c.ReleaseRefresh != ""),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fns[fnReleases], &awseventstargets.LambdaFunctionProps{
			RetryAttempts: jsii.Number(2),
			MaxEventAge:   awscdk.Duration_Hours(jsii.Number(6)),
		})},
	})
}

// newNotificationsBus is the EventBridge bus rollout notifications are
// published on (myriarch-<stage>): its own bus rather than the default
// one, so that its rules, permissions and archive concern Myriarch alone.
func newNotificationsBus(scope constructs.Construct, c Config) awsevents.EventBus {
	return awsevents.NewEventBus(scope, jsii.String("Notifications"), &awsevents.EventBusProps{
		EventBusName: jsii.String("myriarch-" + c.Stage),
		Description:  jsii.String("Myriarch " + c.Stage + ": rollout notifications (source myriarch, docs/notifications.md)"),
	})
}

// notificationMaxAge is how long a notification the bus refuses is retried
// before its record goes to the dead-letter queue: the stream's own
// retention. A record that cannot be published yet (EventBridge throttles,
// or an item from a newer build during a deployment) is retried until then,
// holding back the later records of its shard, so that order holds and
// nothing is skipped; the event stays in the outbox (the feed) for 14 days.
var notificationMaxAge = awscdk.Duration_Hours(jsii.Number(24))

// connectNotifications feeds the outbox's new items to the notify function:
// inserts only (the TTL's deletions are filtered out before any
// invocation), from the oldest record the stream holds, so that a mapping
// created after the first events misses none of them.
func connectNotifications(scope constructs.Construct, fns Functions, ts Tables) awssqs.Queue {
	return connectStream(scope, "NotificationsFailed", fns[fnNotify], ts[tables.Events.Name], awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition: awslambda.StartingPosition_TRIM_HORIZON,
		MaxRecordAge:     notificationMaxAge,
		Filters: &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
			"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
		})},
	})
}

// exampleDetailTypes are what the example rule sends to its topic: the
// notifications a person should act on.
var exampleDetailTypes = []string{"Rollout Paused", "Rollout Failed", "Rollout Rolled Back"}

// newNotificationsExample is the example of routing, deployed only with
// notificationsTopic: an SNS topic (myriarch-<stage>-rollouts) and a rule
// on the bus that sends it the paused, failed and rolled-back rollouts,
// untransformed, so that AWS Chatbot can post them to Slack or Teams.
func newNotificationsExample(scope constructs.Construct, c Config, bus awsevents.IEventBus) awssns.Topic {
	if !c.NotificationsTopic {
		return nil
	}
	topic := awssns.NewTopic(scope, jsii.String("NotificationsTopic"), &awssns.TopicProps{
		TopicName:  jsii.String("myriarch-" + c.Stage + "-rollouts"),
		EnforceSSL: jsii.Bool(true),
	})
	awsevents.NewRule(scope, jsii.String("NotificationsToTopic"), &awsevents.RuleProps{
		EventBus:    bus,
		Description: jsii.String("Myriarch " + c.Stage + ": paused, failed and rolled-back rollouts to the example topic"),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings(notify.Source),
			DetailType: jsii.Strings(exampleDetailTypes...),
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSnsTopic(topic, nil)},
	})
	return topic
}
