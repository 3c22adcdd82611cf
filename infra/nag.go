package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// checkWithNag runs cdk-nag's AwsSolutions rules over the stack at synth. A
// finding is an error annotation, which fails `cdk synth` and the infra
// tests (TestNag_NoUnsuppressedFindings), unless nagSuppressions names it
// with the reason it does not apply here.
func checkWithNag(stack awscdk.Stack) {
	awscdk.Aspects_Of(stack).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	cdknag.NagSuppressions_AddStackSuppressions(stack, nagSuppressions(), jsii.Bool(true))
}

// nagSuppressions are the AwsSolutions findings that do not apply, each with
// its reason. IAM wildcards are suppressed only for the resources named
// (appliesTo); iam_test.go checks that a "*" resource appears only for the
// actions that support no resource-level permission.
func nagSuppressions() *[]*cdknag.NagPackSuppression {
	s := func(id, reason string, appliesTo ...any) *cdknag.NagPackSuppression {
		p := &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String(reason)}
		if len(appliesTo) > 0 {
			p.AppliesTo = &appliesTo
		}
		return p
	}
	re := func(r string) any { return &cdknag.RegexAppliesTo{Regex: jsii.String(r)} }
	return &[]*cdknag.NagPackSuppression{
		s("AwsSolutions-IAM5", "X-Ray's PutTraceSegments and PutTelemetryRecords, ECR's GetAuthorizationToken, the VPC Lambda's network interfaces, CloudWatch's GetMetricData and DescribeAlarms, and the state machine's log delivery support no resource-level permission: AWS requires \"*\" for them (iam_test.go checks that \"*\" is granted for nothing else)",
			"Resource::*"),
		s("AwsSolutions-IAM5", "lambda:InvokeFunction on the function's ARN with :* covers its versions and aliases, as CDK's grantInvoke writes it: still the one function",
			re("/^Resource::<Function[A-Za-z0-9-]+\\.Arn>:\\*$/g")),
		s("AwsSolutions-IAM5", "executor secrets are read by name under the stage's own prefix (myriarch/<stage>/executors/*): operators add a secret per webhook or AWX object without a deploy",
			re("/^Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:myriarch\\/.*$/g")),
		s("AwsSolutions-IAM5", "the watchdog describes the executions of the rollout state machine, whose names are the rollouts' ids: the ARN prefix of that one state machine's executions",
			re("/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:myriarch-.*$/g")),
		s("AwsSolutions-IAM4", "the account-wide role through which API Gateway writes its logs uses AWS's own policy for it, AmazonAPIGatewayPushToCloudWatchLogs, as API Gateway's documentation prescribes",
			re("/^Policy::arn:<AWS::Partition>:iam::aws:policy\\/service-role\\/AmazonAPIGatewayPushToCloudWatchLogs$/g")),
		s("AwsSolutions-APIG2", "the api function validates every request against the OpenAPI document and answers application/problem+json with a stable code; API Gateway's validator would answer in another format"),
		s("AwsSolutions-APIG6", "the stage writes access logs of every request; execution logs of every method would write request bodies (revisions, reasons) to CloudWatch"),
		s("AwsSolutions-COG4", "operators authenticate with Myriarch's API tokens, checked by the TOKEN authorizer (hashes only in its environment), not with a Cognito user pool"),
		s("AwsSolutions-EC23", "the gateway's load balancer takes OpAMP over TLS on 443 from collectors anywhere: the agent token, checked by the gateway, is the access control"),
		s("AwsSolutions-ECS2", "the gateway's environment holds settings only (stage, table prefix, ports, the package URL); its agent tokens come from Secrets Manager as a container secret"),
		s("AwsSolutions-ECS4", "the gateway reports its own metrics (connections, agents) and the load balancer's; Container Insights would add a cost per task for little more"),
		s("AwsSolutions-ELB2", "the network load balancer's access logs (TLS handshakes) would need a bucket and add a cost per connection; the gateway logs each agent's connection itself"),
		s("AwsSolutions-SMG4", "the agent token is rotated by the operator (docs/deploy.md): a rotation writes a new token that every collector must be given, which no Lambda can do"),
		s("AwsSolutions-SQS3", "the queue is the dead-letter queue of a stream's event source mapping (the records a function gave up on): a DLQ itself"),
		s("AwsSolutions-VPC7", "the gateway's VPC carries only the collectors' OpAMP traffic; flow logs would add a cost per byte for what the load balancer's metrics already show"),
	}
}
