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
	if c.Gateway {
		if err := checkGatewayImage(c); err != nil {
			return nil, err
		}
	}
	stack := awscdk.NewStack(scope, jsii.String(stackName(c)), &awscdk.StackProps{
		Description: jsii.String("Myriarch " + c.Stage + ": staged rollouts for OpenTelemetry Collector fleets"),
		Env:         environment(),
	})
	ts := newTables(stack, c)
	net := newGateNetwork(stack, c)
	fns := newFunctions(stack, c, net)
	sm, err := newRolloutStateMachine(stack, c, fns)
	if err != nil {
		return nil, err
	}
	smArn := rolloutStateMachineArn(stack, c)
	bus := newNotificationsBus(stack, c)
	grantFunctions(c, fns, ts, smArn, rolloutExecutionsArn(stack, c), bus)
	dlq := connectAgentEvents(stack, fns, ts)
	notifyDLQ := connectNotifications(stack, fns, ts)
	topic := newNotificationsExample(stack, c, bus)
	schedulePlanner(stack, fns)
	scheduleWatchdog(stack, fns)
	scheduleReleaseRefresh(stack, c, fns)
	api := newAPI(stack, c, fns)
	var gw *Gateway
	if c.Gateway {
		gw = newGateway(stack, c, ts)
	}
	newAlarms(stack, c, fns, sm, dlq, notifyDLQ, gw)

	type output struct {
		name  string
		value *string
	}
	outputs := []output{
		// The base URL operators give myrctl (--api, MYRIARCH_API); the routes are under /api/v1.
		{"ApiUrl", jsii.String(fmt.Sprintf("https://%s.execute-api.%s.%s/%s", *api.RestApiId(), *stack.Region(), *stack.UrlSuffix(), c.Stage))},
		{"ApiId", api.RestApiId()},
		// The operators' web page (adapters/ui), served by the api function.
		{"PageUrl", jsii.String(fmt.Sprintf("https://%s.execute-api.%s.%s/%s/%s/", *api.RestApiId(), *stack.Region(), *stack.UrlSuffix(), c.Stage, pagePath))},
		{"RolloutStateMachineArn", sm.StateMachineArn()},
		{"TablePrefix", jsii.String(tablePrefix(c))},
		// Where rollout notifications arrive: rules of one's own go on this bus.
		{"EventBusName", bus.EventBusName()},
		{"EventBusArn", bus.EventBusArn()},
	}
	if topic != nil {
		outputs = append(outputs, output{"NotificationsTopicArn", topic.TopicArn()})
	}
	if gw != nil {
		// The TLS listener's certificate covers the deployment's own name,
		// never the load balancer's: without domainName the stack cannot
		// name an endpoint agents would trust, and says what to do.
		endpoint := output{"OpampEndpoint", jsii.String(fmt.Sprintf("wss://%s%s", c.DomainName, gatewayOpAMPPath))}
		if c.DomainName == "" {
			endpoint = output{"OpampEndpointNeedsDomainName", jsii.String("point a DNS name that the gateway certificate covers at GatewayLoadBalancerDns (a CNAME or an alias record), set domainName to it and deploy again; agents connect to wss://<that name>" + gatewayOpAMPPath)}
		}
		outputs = append(outputs, endpoint,
			output{"GatewayLoadBalancerDns", gw.LoadBalancer.LoadBalancerDnsName()},
			// For aws ecs update-service --cluster ... --service ... (a token rotation).
			output{"GatewayClusterName", gw.Cluster.ClusterName()},
			output{"GatewayServiceName", gw.Service.ServiceName()},
			output{"AgentTokenSecretArn", gw.TokenSecret.SecretArn()})
	}
	if net != nil && net.created != nil {
		// The group the collectors' (and Prometheus's, Alertmanager's) groups let in.
		outputs = append(outputs, output{"EngineSecurityGroupId", net.created.SecurityGroupId()})
	}
	for _, o := range outputs {
		awscdk.NewCfnOutput(stack, jsii.String(o.name), &awscdk.CfnOutputProps{Value: o.value})
	}
	checkWithNag(stack)
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
