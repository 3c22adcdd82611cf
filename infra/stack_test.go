package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

func TestAlarms_NotifyTheConfiguredTopic(t *testing.T) {
	s := synthesized(t, variant)
	for id, a := range s.ofType("AWS::CloudWatch::Alarm") {
		if !reflect.DeepEqual(a.Properties["AlarmActions"], []any{variant["alarmTopicArn"]}) {
			t.Errorf("%s: actions %v, want the topic", id, a.Properties["AlarmActions"])
		}
	}
}

func TestOutputs_WhereAgentsAndOperatorsConnect(t *testing.T) {
	s := synthesized(t, variant)
	must(t, "OpAMP endpoint on the configured domain", func() {
		s.template.HasOutput(jsii.String("OpampEndpoint"), map[string]any{"Value": "wss://opamp.example.com/v1/opamp"})
	})
	// Without domainName no endpoint is named: the certificate covers no
	// load balancer's name, and agents would refuse wss://<load balancer>.
	plain := synthesized(t, nil)
	if outs := *plain.template.FindOutputs(jsii.String("OpampEndpoint"), nil); len(outs) != 0 {
		t.Errorf("OpampEndpoint without domainName: %v, want none", outs)
	}
	must(t, "the step that names the endpoint", func() {
		plain.template.HasOutput(jsii.String("OpampEndpointNeedsDomainName"), map[string]any{"Value": assertions.Match_StringLikeRegexp(jsii.String("set domainName"))})
	})
	var url any
	for _, o := range *s.template.FindOutputs(jsii.String("ApiUrl"), nil) {
		url = (*o)["Value"]
	}
	if got, want := flatten(url), "https://{"+refs(url)[0]+"}.execute-api.{AWS::Region}.{AWS::URLSuffix}/test"; got != want {
		t.Errorf("ApiUrl %s, want %s (myrctl's base URL: no trailing slash)", got, want)
	}
	for _, name := range []string{"ApiUrl", "ApiId", "AgentTokenSecretArn", "RolloutStateMachineArn", "TablePrefix", "GatewayLoadBalancerDns", "EventBusName", "EventBusArn", "NotificationsTopicArn"} {
		must(t, "output "+name, func() { s.template.HasOutput(jsii.String(name), map[string]any{"Value": assertions.Match_AnyValue()}) })
	}
}

// The gateway's cluster and service, by the names the ECS CLI wants
// (aws ecs update-service --cluster <GatewayClusterName> --service
// <GatewayServiceName>, docs/deploy.md): the cluster's Ref is its name, the
// service's GetAtt Name.
func TestOutputs_GatewayClusterAndService(t *testing.T) {
	s := synthesized(t, nil)
	var cluster, service string
	for id := range s.ofType("AWS::ECS::Cluster") {
		cluster = id
	}
	for id, svc := range s.ofType("AWS::ECS::Service") {
		service = id
		if refs(svc.Properties["Cluster"])[0] != cluster {
			t.Errorf("service %s runs in %v, not the cluster %s", id, svc.Properties["Cluster"], cluster)
		}
	}
	must(t, "output GatewayClusterName", func() {
		s.template.HasOutput(jsii.String("GatewayClusterName"), map[string]any{"Value": map[string]any{"Ref": cluster}})
	})
	must(t, "output GatewayServiceName", func() {
		s.template.HasOutput(jsii.String("GatewayServiceName"), map[string]any{"Value": map[string]any{"Fn::GetAtt": []any{service, "Name"}}})
	})
	without := synthesized(t, map[string]string{"gateway": "false", "deletionProtection": "false"})
	for _, name := range []string{"GatewayClusterName", "GatewayServiceName"} {
		if out := without.template.FindOutputs(jsii.String(name), nil); len(*out) != 0 {
			t.Errorf("output %s without the gateway", name)
		}
	}
}

// variant overrides every setting that changes the template's shape.
var variant = map[string]string{
	"stage":              testStage,
	"domainName":         "opamp.example.com",
	"certificateArn":     "arn:aws:acm:eu-west-1:123456789012:certificate/0b0b0b0b-1111-2222-3333-444444444444",
	"agentTokenSecret":   "arn:aws:secretsmanager:eu-west-1:123456789012:secret:myriarch/test/agent-tokens-AbCdEf",
	"gatewayImage":       "123456789012.dkr.ecr.eu-west-1.amazonaws.com/myriarch-gateway:1.2.3",
	"gatewayArch":        "x86_64",
	"gatewayTasks":       "3",
	"natGateways":        "1",
	"deletionProtection": "false",
	"alarmTopicArn":      "arn:aws:sns:eu-west-1:123456789012:myriarch-alarms",
	"apiTokens":          tokenTable,
	"releases":           "0.120.0,0.121.0",
	"platforms":          "linux/amd64,linux/arm64",
	"defaultTimezone":    "Europe/Berlin",
	"agentRetention":     "720h",
	"releaseRefresh":     "otelcol-contrib,acme-otelcol=acme/otelcol-releases",
	"releaseSourceUrl":   "https://github.example.com/api/v3",
	"notificationsTopic": "true",
	// Gates: AMP through a URL of one's own, an Alertmanager, no
	// CloudWatch, and the engine in a VPC with the operator's groups.
	"prometheusUrl":        "https://aps-proxy.internal.example.com/workspaces/" + testWorkspace,
	"ampWorkspaceArn":      testWorkspaceArn,
	"alertmanagerUrl":      "http://alertmanager.internal.example.com:9093",
	"cloudwatchGates":      "false",
	"gateVpcId":            "vpc-0123456789abcdef0",
	"gateSubnetIds":        "subnet-0bbbbbbbbbbbbbbbb,subnet-0aaaaaaaaaaaaaaaa",
	"gateSecurityGroupIds": "sg-0123456789abcdef0,sg-11111111",
}

func TestVariant_ConfigurationReachesTheTemplate(t *testing.T) {
	s := synthesized(t, variant)
	must(t, "configured certificate, no parameter", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::Listener"), map[string]any{
			"Certificates": []any{map[string]any{"CertificateArn": variant["certificateArn"]}},
		})
	})
	if params := s.template.FindParameters(jsii.String("GatewayCertificateArn"), nil); len(*params) != 0 {
		t.Error("a certificate parameter although certificateArn is set")
	}
	must(t, "published image on x86, three tasks in private subnets", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"RuntimePlatform": map[string]any{"CpuArchitecture": "X86_64", "OperatingSystemFamily": "LINUX"},
		})
		s.template.HasResourceProperties(jsii.String("AWS::ECS::Service"), map[string]any{
			"DesiredCount": 3,
			"NetworkConfiguration": map[string]any{"AwsvpcConfiguration": assertions.Match_ObjectLike(&map[string]any{
				"AssignPublicIp": "DISABLED",
			})},
		})
		s.template.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	})
	for _, td := range s.ofType("AWS::ECS::TaskDefinition") {
		image := flatten(td.Properties["ContainerDefinitions"].([]any)[0].(map[string]any)["Image"])
		if image != "123456789012.dkr.ecr.eu-west-1.{AWS::URLSuffix}/myriarch-gateway:1.2.3" {
			t.Errorf("image %s, want the configured one", image)
		}
		// An ECR image is pulled with the execution role: it may read that repository.
		pulls := false
		for _, st := range s.policies(t)[roleOf(td, "ExecutionRoleArn")] {
			if contains(st.actions, "ecr:BatchGetImage") && reflect.DeepEqual(st.resources, []any{"arn:aws:ecr:eu-west-1:123456789012:repository/myriarch-gateway"}) {
				pulls = true
			}
		}
		if !pulls {
			t.Error("the execution role may not pull the configured ECR image")
		}
	}
	for _, f := range functionSpecs {
		_, r := s.function(t, f.Name)
		e := env(r.Properties)
		if (e[envTokens] == tokenTable) != f.APITokens {
			t.Errorf("%s: %s = %v, want the token table: %v", f.Name, envTokens, e[envTokens], f.APITokens)
		}
		if (e["MYRIARCH_DEFAULT_TIMEZONE"] == "Europe/Berlin") != f.ServerTimezone {
			t.Errorf("%s: default timezone %v, wants it: %v", f.Name, e["MYRIARCH_DEFAULT_TIMEZONE"], f.ServerTimezone)
		}
		if (e["MYRIARCH_AGENT_RETENTION"] == variant["agentRetention"]) != f.Liveness {
			t.Errorf("%s: agent retention %v, wants it: %v", f.Name, e["MYRIARCH_AGENT_RETENTION"], f.Liveness)
		}
		if (e["MYRIARCH_RELEASES"] == variant["releases"] && e["MYRIARCH_PLATFORMS"] == variant["platforms"]) != f.Catalog {
			t.Errorf("%s: releases %v platforms %v, catalog: %v", f.Name, e["MYRIARCH_RELEASES"], e["MYRIARCH_PLATFORMS"], f.Catalog)
		}
		if (e[envReleaseRefresh] == variant["releaseRefresh"] && e[envReleaseSourceURL] == variant["releaseSourceUrl"]) != f.ReleaseRefresh {
			t.Errorf("%s: release refresh %v from %v, wants it: %v", f.Name, e[envReleaseRefresh], e[envReleaseSourceURL], f.ReleaseRefresh)
		}
	}
	if len(s.ofType("AWS::SecretsManager::Secret")) != 0 {
		t.Error("a new token secret although agentTokenSecret is set")
	}
	for hash := range fileAssets(t, s) {
		if strings.HasPrefix(hash, "docker:") {
			t.Errorf("an image asset although gatewayImage is set")
		}
	}
}

// The same configuration gives the same template byte for byte: no Go map
// order leaks into it, so a deploy without changes changes nothing. (A
// published image: the image asset's hash covers core/ and adapters/, which others may be
// editing in this working tree while the test runs.)
func TestSynth_Deterministic(t *testing.T) {
	pinned := map[string]string{"gatewayImage": "public.ecr.aws/myriarch/opamp-gateway:1.0.0"}
	first := synthesized(t, pinned)
	second := synthesize(pinned)
	if second.err != nil {
		t.Fatal(second.err)
	}
	name := stackName(first.config) + ".template.json"
	a, errA := os.ReadFile(filepath.Join(first.outdir, name))
	b, errB := os.ReadFile(filepath.Join(second.outdir, name))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if string(a) != string(b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		from := max(0, i-300)
		t.Errorf("two synths of the same configuration differ at byte %d:\n%s\n---\n%s", i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
	}
}

// Without the gateway (LocalStack's free edition has no ECS or load
// balancers) the stack has no network, service or secret, and the rest.
func TestStack_WithoutGateway(t *testing.T) {
	s := synthesized(t, map[string]string{"gateway": "false", "deletionProtection": "false"})
	for _, typ := range []string{"AWS::EC2::VPC", "AWS::ECS::Service", "AWS::ElasticLoadBalancingV2::LoadBalancer", "AWS::SecretsManager::Secret"} {
		if n := len(s.ofType(typ)); n != 0 {
			t.Errorf("%d %s without the gateway", n, typ)
		}
	}
	if len(s.ofType("AWS::Lambda::Function")) != len(functionSpecs) || len(s.ofType("AWS::StepFunctions::StateMachine")) != 1 {
		t.Error("the functions and the state machine are deployed without the gateway too")
	}
	for _, name := range []string{"ApiUrl", "RolloutStateMachineArn", "TablePrefix"} {
		must(t, "output "+name, func() { s.template.HasOutput(jsii.String(name), map[string]any{"Value": assertions.Match_AnyValue()}) })
	}
}
