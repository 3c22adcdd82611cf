// Package schedule runs the template's scheduled AWS::Events::Rule
// resources as EventBridge does: every period of an ENABLED rule's
// rate(...) expression, each target (a Lambda function) is invoked
// asynchronously with the Scheduled Event EventBridge sends, and a
// delivery that fails is retried per the target's RetryPolicy. A DISABLED
// rule runs nothing.
//
// Not emulated: cron(...) expressions (no maintained Go parser of
// EventBridge's cron syntax is among the modules here; refused when the
// template is read), targets other than Lambda functions, input paths and
// transformers, and dead-letter queues of targets (refused too). Rules
// with an EventPattern belong to their bus and are not read here.
package schedule
