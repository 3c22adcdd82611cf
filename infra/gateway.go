package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapplicationautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awselasticloadbalancingv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

const (
	gatewayDockerfile  = "opamp-gateway/Dockerfile" // relative to the repository, the image's build context
	gatewayPort        = 4320                       // the container's OpAMP port (WebSocket and HTTP)
	gatewayHealthPort  = 8080                       // the container's /healthz, for the load balancer only
	gatewayHealthPath  = "/healthz"                 // 503 while the task drains
	gatewayOpAMPPath   = "/v1/opamp"                // where agents connect
	gatewayCPU         = 1024                       // vCPU units per task (1 vCPU): docs/scale.md's sizing
	gatewayMemoryMiB   = 2048                       // per task: 40,000 agents at about 24 KB each, half the memory
	gatewayStopSeconds = 30                         // SIGTERM drains connections before SIGKILL
)

// Gateway is the always-on OpAMP gateway and what agents connect to.
type Gateway struct {
	Cluster      awsecs.Cluster
	Service      awsecs.FargateService
	LoadBalancer awselasticloadbalancingv2.NetworkLoadBalancer
	TargetGroup  awselasticloadbalancingv2.NetworkTargetGroup
	TokenSecret  awssecretsmanager.ISecret
}

// newGateway runs the gateway as a Fargate service of at least two tasks
// behind a Network Load Balancer that terminates TLS on 443 and checks
// each task's /healthz. With no NAT gateways the tasks run in public
// subnets with public addresses, reachable only from the load balancer.
func newGateway(scope constructs.Construct, c Config, ts Tables) *Gateway {
	vpc := newVpc(scope, c)
	taskSubnets := &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PUBLIC}
	if c.NatGateways > 0 {
		taskSubnets = &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}
	}

	lbGroup := awsec2.NewSecurityGroup(scope, jsii.String("GatewayLoadBalancerSG"), &awsec2.SecurityGroupProps{
		Vpc: vpc, Description: jsii.String("Myriarch gateway load balancer: TLS from agents"), AllowAllOutbound: jsii.Bool(false),
	})
	lbGroup.AddIngressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)), jsii.String("agents over TLS"), nil)
	taskGroup := awsec2.NewSecurityGroup(scope, jsii.String("GatewayTaskSG"), &awsec2.SecurityGroupProps{
		Vpc: vpc, Description: jsii.String("Myriarch gateway tasks: OpAMP and health checks from the load balancer only"),
	})
	for _, port := range []float64{gatewayPort, gatewayHealthPort} {
		taskGroup.AddIngressRule(lbGroup, awsec2.Port_Tcp(jsii.Number(port)), jsii.String("from the load balancer"), nil)
		lbGroup.AddEgressRule(taskGroup, awsec2.Port_Tcp(jsii.Number(port)), jsii.String("to the gateway tasks"), nil)
	}

	secret := agentTokenSecret(scope, c)
	task := awsecs.NewFargateTaskDefinition(scope, jsii.String("GatewayTask"), &awsecs.FargateTaskDefinitionProps{
		Cpu:            jsii.Number(gatewayCPU),
		MemoryLimitMiB: jsii.Number(gatewayMemoryMiB),
		RuntimePlatform: &awsecs.RuntimePlatform{
			OperatingSystemFamily: awsecs.OperatingSystemFamily_LINUX(),
			CpuArchitecture:       cpuArchitecture(c),
		},
	})
	logs := awslogs.NewLogGroup(scope, jsii.String("Logs-gateway"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	container := task.AddContainer(jsii.String("gateway"), &awsecs.ContainerDefinitionOptions{
		Image:     gatewayImage(scope, c),
		Essential: jsii.Bool(true),
		PortMappings: &[]*awsecs.PortMapping{
			{ContainerPort: jsii.Number(gatewayPort), Protocol: awsecs.Protocol_TCP},
			{ContainerPort: jsii.Number(gatewayHealthPort), Protocol: awsecs.Protocol_TCP},
		},
		// Injected when a task starts: a rotated token reaches the tasks of
		// the next deployment (or `aws ecs update-service --force-new-deployment`).
		Secrets:     &map[string]awsecs.Secret{envAgentTokens: awsecs.Secret_FromSecretsManager(secret, nil)},
		Logging:     awsecs.LogDrivers_AwsLogs(&awsecs.AwsLogDriverProps{StreamPrefix: jsii.String("gateway"), LogGroup: logs}),
		StopTimeout: awscdk.Duration_Seconds(jsii.Number(gatewayStopSeconds)),
	})
	// The names opamp-gateway/main.go reads, added in name order: the
	// template's list must not change from one synth to the next.
	env := map[string]string{
		envStage:                         c.Stage,
		envTablePrefix:                   tablePrefix(c),
		"MYRIARCH_GATEWAY_LISTEN":        fmt.Sprintf(":%d", gatewayPort),
		"MYRIARCH_GATEWAY_HEALTH_LISTEN": fmt.Sprintf(":%d", gatewayHealthPort),
		// Behind the NLB's TLS listener every connection comes from one of
		// the load balancer's own addresses (a TLS listener cannot preserve
		// the client's), so a limit per source would count the load
		// balancer, not the agents: off.
		"MYRIARCH_GATEWAY_MAX_CONNS_PER_SOURCE": "0",
		// The NLB drops a TLS flow idle for 350 s (fixed, not a setting): a
		// ping a minute keeps quiet agents' connections, whatever their
		// heartbeat. Written out although it is the gateway's default, so
		// that the template says what the task does.
		"MYRIARCH_GATEWAY_WS_PING": "60s",
	}
	// What a package offer carries (the updater executor); unset, the
	// gateway's default URL never resolves.
	if c.PackageDownloadURL != "" {
		env["MYRIARCH_GATEWAY_DOWNLOAD_URL"] = c.PackageDownloadURL
	}
	if c.PackageName != "" {
		env["MYRIARCH_GATEWAY_PACKAGE_NAME"] = c.PackageName
	}
	if c.PackageChecksumsURL != "" {
		env["MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL"] = c.PackageChecksumsURL
	}
	if c.PackageSignatureURL != "" {
		env["MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL"] = c.PackageSignatureURL
	}
	// The URL offered with each agent's own credential: behind the NLB,
	// which ends TLS, the gateway would see ws:// and its task's address.
	// Without domainName there is no name the certificate covers, and the
	// agents reconnect to the URL they used.
	if c.DomainName != "" {
		env["MYRIARCH_GATEWAY_AGENT_ENDPOINT"] = fmt.Sprintf("wss://%s%s", c.DomainName, gatewayOpAMPPath)
	}
	for _, name := range sortedKeys(env) {
		container.AddEnvironment(jsii.String(name), jsii.String(env[name]))
	}
	grantTables(ts, gatewayTables, task.TaskRole())

	cluster := awsecs.NewCluster(scope, jsii.String("Cluster"), &awsecs.ClusterProps{Vpc: vpc})
	service := awsecs.NewFargateService(scope, jsii.String("Gateway"), &awsecs.FargateServiceProps{
		Cluster:                cluster,
		TaskDefinition:         task,
		DesiredCount:           jsii.Number(float64(c.GatewayTasks)),
		MinHealthyPercent:      jsii.Number(100), // replace tasks one extra at a time, never below the desired count
		MaxHealthyPercent:      jsii.Number(200),
		CircuitBreaker:         &awsecs.DeploymentCircuitBreaker{Enable: jsii.Bool(true), Rollback: jsii.Bool(true)},
		AssignPublicIp:         jsii.Bool(c.NatGateways == 0), // to pull the image and reach AWS without NAT
		VpcSubnets:             taskSubnets,
		SecurityGroups:         &[]awsec2.ISecurityGroup{taskGroup},
		HealthCheckGracePeriod: awscdk.Duration_Seconds(jsii.Number(60)),
	})
	scaleGateway(service, c)

	nlb := awselasticloadbalancingv2.NewNetworkLoadBalancer(scope, jsii.String("GatewayLoadBalancer"), &awselasticloadbalancingv2.NetworkLoadBalancerProps{
		Vpc:              vpc,
		InternetFacing:   jsii.Bool(true),
		CrossZoneEnabled: jsii.Bool(true),
		SecurityGroups:   &[]awsec2.ISecurityGroup{lbGroup},
		VpcSubnets:       &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PUBLIC},
	})
	listener := nlb.AddListener(jsii.String("Tls"), &awselasticloadbalancingv2.BaseNetworkListenerProps{
		Port:         jsii.Number(443),
		Protocol:     awselasticloadbalancingv2.Protocol_TLS,
		Certificates: &[]awselasticloadbalancingv2.IListenerCertificate{awselasticloadbalancingv2.ListenerCertificate_FromArn(certificateArn(scope, c))},
		SslPolicy:    awselasticloadbalancingv2.SslPolicy_RECOMMENDED_TLS,
	})
	tg := listener.AddTargets(jsii.String("Gateway"), &awselasticloadbalancingv2.AddNetworkTargetsProps{
		Port:     jsii.Number(gatewayPort),
		Protocol: awselasticloadbalancingv2.Protocol_TCP,
		Targets: &[]awselasticloadbalancingv2.INetworkLoadBalancerTarget{service.LoadBalancerTarget(&awsecs.LoadBalancerTargetOptions{
			ContainerName: jsii.String("gateway"), ContainerPort: jsii.Number(gatewayPort),
		})},
		HealthCheck: &awselasticloadbalancingv2.HealthCheck{
			Protocol:                awselasticloadbalancingv2.Protocol_HTTP,
			Port:                    jsii.String(fmt.Sprint(gatewayHealthPort)),
			Path:                    jsii.String(gatewayHealthPath),
			Interval:                awscdk.Duration_Seconds(jsii.Number(10)),
			HealthyThresholdCount:   jsii.Number(2),
			UnhealthyThresholdCount: jsii.Number(2),
		},
		// Shorter than the default 300 s: a draining task has closed its
		// connections by then, and agents reconnect to another task.
		DeregistrationDelay: awscdk.Duration_Seconds(jsii.Number(gatewayStopSeconds)),
	})
	return &Gateway{Cluster: cluster, Service: service, LoadBalancer: nlb, TargetGroup: tg, TokenSecret: secret}
}

// envAgentTokens carries the agents' bearer tokens into the gateway:
// comma-separated, so that a rotation can accept the old and the new one.
const envAgentTokens = "MYRIARCH_AGENT_TOKENS"

func newVpc(scope constructs.Construct, c Config) awsec2.Vpc {
	subnets := []*awsec2.SubnetConfiguration{{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)}}
	if c.NatGateways > 0 {
		subnets = append(subnets, &awsec2.SubnetConfiguration{Name: jsii.String("private"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(24)})
	}
	return awsec2.NewVpc(scope, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:              jsii.Number(2),
		NatGateways:         jsii.Number(float64(c.NatGateways)),
		SubnetConfiguration: &subnets,
		// DynamoDB through a gateway endpoint: free, and no NAT traffic.
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDB": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
		},
		// Would add a custom-resource Lambda; nothing uses the default group.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
}

// certificateArn is the configured ACM certificate, else a stack parameter:
// synth needs no certificate, and a deployment cannot happen without one.
func certificateArn(scope constructs.Construct, c Config) *string {
	if c.CertificateArn != "" {
		return jsii.String(c.CertificateArn)
	}
	p := awscdk.NewCfnParameter(scope, jsii.String("GatewayCertificateArn"), &awscdk.CfnParameterProps{
		Type:           jsii.String("String"),
		Description:    jsii.String("ARN of the ACM certificate for the gateway's TLS listener (or set the certificateArn context)"),
		AllowedPattern: jsii.String(`arn:aws[a-z-]*:acm:.+`),
	})
	return p.ValueAsString()
}

// agentTokenSecret is the configured secret (a name, or a complete ARN),
// else a new one with a generated token, named myriarch/<stage>/agent-tokens.
func agentTokenSecret(scope constructs.Construct, c Config) awssecretsmanager.ISecret {
	switch {
	case strings.HasPrefix(c.AgentTokenSecret, "arn:"):
		return awssecretsmanager.Secret_FromSecretCompleteArn(scope, jsii.String("AgentTokens"), jsii.String(c.AgentTokenSecret))
	case c.AgentTokenSecret != "":
		return awssecretsmanager.Secret_FromSecretNameV2(scope, jsii.String("AgentTokens"), jsii.String(c.AgentTokenSecret))
	}
	return awssecretsmanager.NewSecret(scope, jsii.String("AgentTokens"), &awssecretsmanager.SecretProps{
		SecretName:  jsii.String("myriarch/" + c.Stage + "/agent-tokens"),
		Description: jsii.String("Bearer tokens the OpAMP gateway accepts from agents"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(48),
			ExcludePunctuation: jsii.Bool(true),
		},
	})
}

// Scaling of the gateway's tasks (docs/scale.md, "Sizing"): a task is bound
// by memory, about 24 KB per connected agent, and is planned for 40,000
// agents, half of its 2 GB. Target tracking adds tasks when the average
// memory (or CPU) of the tasks passes half, up to gatewayMaxTasks, and
// removes them slowly: a task that goes disconnects its agents, which
// reconnect to the others at once, a connect storm best kept rare.
const (
	gatewayMemoryTarget  = 50 // percent of the tasks' memory, on average
	gatewayCPUTarget     = 50 // percent of their CPU
	gatewayScaleInAfter  = 30 * time.Minute
	gatewayScaleOutAfter = 2 * time.Minute
)

func scaleGateway(service awsecs.FargateService, c Config) {
	tasks := service.AutoScaleTaskCount(&awsapplicationautoscaling.EnableScalingProps{
		MinCapacity: jsii.Number(float64(c.GatewayTasks)),
		MaxCapacity: jsii.Number(float64(c.GatewayMaxTasks)),
	})
	cool := func(d time.Duration) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(d.Seconds())) }
	tasks.ScaleOnMemoryUtilization(jsii.String("Memory"), &awsecs.MemoryUtilizationScalingProps{
		TargetUtilizationPercent: jsii.Number(gatewayMemoryTarget),
		ScaleInCooldown:          cool(gatewayScaleInAfter),
		ScaleOutCooldown:         cool(gatewayScaleOutAfter),
	})
	tasks.ScaleOnCpuUtilization(jsii.String("Cpu"), &awsecs.CpuUtilizationScalingProps{
		TargetUtilizationPercent: jsii.Number(gatewayCPUTarget),
		ScaleInCooldown:          cool(gatewayScaleInAfter),
		ScaleOutCooldown:         cool(gatewayScaleOutAfter),
	})
}
