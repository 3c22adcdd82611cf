package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

func TestGateway_FargateBehindATLSLoadBalancer(t *testing.T) {
	s := synthesized(t, nil)
	must(t, "service", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::Service"), map[string]any{
			"DesiredCount": 2,
			"LaunchType":   "FARGATE",
			"DeploymentConfiguration": assertions.Match_ObjectLike(&map[string]any{
				"MinimumHealthyPercent":    100,
				"DeploymentCircuitBreaker": map[string]any{"Enable": true, "Rollback": true},
			}),
		})
	})
	must(t, "TLS listener with the certificate parameter", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::Listener"), map[string]any{
			"Port": 443, "Protocol": "TLS",
			"Certificates": []any{map[string]any{"CertificateArn": map[string]any{"Ref": "GatewayCertificateArn"}}},
		})
	})
	must(t, "certificate parameter", func() {
		s.template.HasParameter(jsii.String("GatewayCertificateArn"), map[string]any{"Type": "String"})
	})
	must(t, "internet-facing network load balancer", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::LoadBalancer"), map[string]any{
			"Type": "network", "Scheme": "internet-facing",
		})
	})
	must(t, "health check on /healthz", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::TargetGroup"), map[string]any{
			"Port": gatewayPort, "Protocol": "TCP", "TargetType": "ip",
			"HealthCheckProtocol": "HTTP", "HealthCheckPath": "/healthz", "HealthCheckPort": "8080",
		})
	})
	must(t, "task on Graviton with the token secret", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"RuntimePlatform": map[string]any{"CpuArchitecture": "ARM64", "OperatingSystemFamily": "LINUX"},
			"ContainerDefinitions": []any{assertions.Match_ObjectLike(&map[string]any{
				"Secrets":      []any{assertions.Match_ObjectLike(&map[string]any{"Name": envAgentTokens})},
				"PortMappings": []any{assertions.Match_ObjectLike(&map[string]any{"ContainerPort": gatewayPort}), assertions.Match_ObjectLike(&map[string]any{"ContainerPort": gatewayHealthPort})},
				"Environment": []any{ // in name order
					map[string]any{"Name": "MYRIARCH_GATEWAY_HEALTH_LISTEN", "Value": ":8080"},
					map[string]any{"Name": "MYRIARCH_GATEWAY_LISTEN", "Value": ":4320"},
					map[string]any{"Name": "MYRIARCH_GATEWAY_MAX_CONNS_PER_SOURCE", "Value": "0"}, // the NLB's addresses, not the agents'
					map[string]any{"Name": "MYRIARCH_GATEWAY_WS_PING", "Value": "60s"},            // well under the NLB's 350 s idle timeout
					map[string]any{"Name": envStage, "Value": testStage},
					map[string]any{"Name": envTablePrefix, "Value": "myriarch-test-"},
				},
				"StopTimeout": gatewayStopSeconds,
			})},
		})
	})
}

// Only the load balancer reaches the tasks, and only on the gateway port.
func TestGateway_TasksReachableOnlyFromTheLoadBalancer(t *testing.T) {
	s := synthesized(t, nil)
	groups := s.ofType("AWS::EC2::SecurityGroup")
	for id, g := range groups {
		for _, rule := range list(g.Properties["SecurityGroupIngress"]) {
			r, _ := rule.(map[string]any)
			if r == nil {
				continue
			}
			if r["CidrIp"] == "0.0.0.0/0" && (r["FromPort"] != float64(443) || r["ToPort"] != float64(443)) {
				t.Errorf("%s opens %v-%v to the internet, only 443 may be", id, r["FromPort"], r["ToPort"])
			}
		}
	}
	var ports []float64
	for _, r := range s.ofType("AWS::EC2::SecurityGroupIngress") {
		if r.Properties["SourceSecurityGroupId"] == nil || r.Properties["FromPort"] != r.Properties["ToPort"] {
			t.Errorf("ingress %v, want one port from the load balancer's group", r.Properties)
		}
		ports = append(ports, r.Properties["FromPort"].(float64))
	}
	sort.Float64s(ports)
	if want := []float64{gatewayPort, gatewayHealthPort}; !reflect.DeepEqual(ports, want) {
		t.Errorf("ports %v reachable from the load balancer, want %v", ports, want)
	}
}

func TestGateway_ImageBuiltAtDeployFromTheDockerfile(t *testing.T) {
	s := synthesized(t, nil)
	var dirs []string
	for hash, dir := range fileAssets(t, s) {
		if strings.HasPrefix(hash, "docker:") {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("%d image assets, want 1", len(dirs))
	}
	// Synthesis staged the build context (no Docker ran: this machine
	// needs none); it holds exactly the allow-listed paths.
	entries, err := os.ReadDir(filepath.Join(s.outdir, dirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := append([]string(nil), gatewayContext...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("image build context holds %v, want %v", got, want)
	}
}

// Each agent's credential is offered with the URL agents use, the
// deployment's domain name, not what the gateway sees behind the NLB.
func TestGateway_AgentEndpointFromTheDomainName(t *testing.T) {
	s := synthesized(t, map[string]string{"domainName": "opamp.example.com", "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"})
	must(t, "agent endpoint in the task's environment", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"ContainerDefinitions": []any{assertions.Match_ObjectLike(&map[string]any{
				"Environment": assertions.Match_ArrayWith(&[]any{
					map[string]any{"Name": "MYRIARCH_GATEWAY_AGENT_ENDPOINT", "Value": "wss://opamp.example.com/v1/opamp"},
				}),
			})},
		})
	})
}

// The package offers of the updater executor carry the deployment's
// download URL template and package name (packageDownloadUrl,
// packageName), which the gateway's task reads from its environment.
func TestGateway_PackageOffersFromTheConfiguration(t *testing.T) {
	const url = "https://downloads.example.com/otelcol/{version}/otelcol-contrib.tar.gz"
	const sums, sig = "https://downloads.example.com/otelcol/{version}/checksums.txt", url + ".minisig"
	s := synthesized(t, map[string]string{"packageDownloadUrl": url, "packageName": "otelcol-contrib",
		"packageChecksumsUrl": sums, "packageSignatureUrl": sig})
	must(t, "download URL, checksums, signature and package name in the task's environment", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"ContainerDefinitions": []any{assertions.Match_ObjectLike(&map[string]any{
				"Environment": assertions.Match_ArrayWith(&[]any{
					map[string]any{"Name": "MYRIARCH_GATEWAY_DOWNLOAD_URL", "Value": url},
					map[string]any{"Name": "MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL", "Value": sums},
					map[string]any{"Name": "MYRIARCH_GATEWAY_PACKAGE_NAME", "Value": "otelcol-contrib"},
					map[string]any{"Name": "MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL", "Value": sig},
				}),
			})},
		})
	})
}

// A task has docs/scale.md's size (1 vCPU, 2 GB: 40,000 agents), and the
// service scales on the tasks' memory and CPU between gatewayTasks and
// gatewayMaxTasks, adding tasks within minutes and removing them slowly.
func TestGateway_SizedAndScaled(t *testing.T) {
	s := synthesized(t, nil)
	must(t, "task of 1 vCPU and 2 GB", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{"Cpu": "1024", "Memory": "2048"})
	})
	must(t, "scaling between 2 and 10 tasks", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ApplicationAutoScaling::ScalableTarget"), map[string]any{
			"MinCapacity": 2, "MaxCapacity": 10, "ScalableDimension": "ecs:service:DesiredCount"})
	})
	for metric, target := range map[string]int{"ECSServiceAverageMemoryUtilization": gatewayMemoryTarget, "ECSServiceAverageCPUUtilization": gatewayCPUTarget} {
		must(t, "target tracking on "+metric, func() {
			s.template.HasResourceProperties(jsii.String("AWS::ApplicationAutoScaling::ScalingPolicy"), map[string]any{
				"PolicyType": "TargetTrackingScaling",
				"TargetTrackingScalingPolicyConfiguration": assertions.Match_ObjectLike(&map[string]any{
					"PredefinedMetricSpecification": map[string]any{"PredefinedMetricType": metric},
					"TargetValue":                   target,
					"ScaleInCooldown":               1800,
				}),
			})
		})
	}
}
