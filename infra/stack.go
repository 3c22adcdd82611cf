package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// stackName is the CloudFormation stack of a stage.
func stackName(c Config) string { return "Myriarch-" + c.Stage }

// newStack is the whole deployment of one stage. It checks first what
// synthesis needs from the repository (built Lambdas, the gateway's
// Dockerfile) so that a missing piece is one clear error.
func newStack(scope constructs.Construct, c Config) (awscdk.Stack, error) {
	if err := checkBuilt(c); err != nil {
		return nil, err
	}
	if err := checkGatewayImage(c); err != nil {
		return nil, err
	}
	stack := awscdk.NewStack(scope, jsii.String(stackName(c)), &awscdk.StackProps{
		Description: jsii.String("Myriarch " + c.Stage + ": staged rollouts for OpenTelemetry Collector fleets"),
		Env:         environment(),
	})
	ts := newTables(stack, c)
	fns := newFunctions(stack, c)
	sm, err := newRolloutStateMachine(stack, c, fns)
	if err != nil {
		return nil, err
	}
	smArn := rolloutStateMachineArn(stack, c)
	grantFunctions(fns, ts, smArn)
	dlq := connectAgentEvents(stack, fns, ts)
	schedulePlanner(stack, fns)
	api := newAPI(stack, c, fns)
	gw := newGateway(stack, c, ts)
	newAlarms(stack, c, fns, sm, dlq, gw)

	host := c.DomainName
	if host == "" {
		host = *gw.LoadBalancer.LoadBalancerDnsName()
	}
	outputs := []struct {
		name  string
		value *string
	}{
		{"ApiUrl", api.UrlForPath(jsii.String("/api/v1"))},
		{"OpampEndpoint", jsii.String(fmt.Sprintf("wss://%s%s", host, gatewayOpAMPPath))},
		{"GatewayLoadBalancerDns", gw.LoadBalancer.LoadBalancerDnsName()},
		{"AgentTokenSecretArn", gw.TokenSecret.SecretArn()},
		{"RolloutStateMachineArn", sm.StateMachineArn()},
		{"TablePrefix", jsii.String(tablePrefix(c))},
	}
	for _, o := range outputs {
		awscdk.NewCfnOutput(stack, jsii.String(o.name), &awscdk.CfnOutputProps{Value: o.value})
	}
	return stack, nil
}

// environment pins the stack to the CLI's account and region when it has
// them (`cdk deploy` with credentials); without, the stack is
// environment-agnostic, so `cdk synth` needs no credentials.
func environment() *awscdk.Environment {
	account, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION")
	if account == "" || region == "" {
		return nil
	}
	return &awscdk.Environment{Account: jsii.String(account), Region: jsii.String(region)}
}
