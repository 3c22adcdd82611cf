package main

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/gate/gateread"
)

const (
	testWorkspace    = "ws-12345678-abcd-1234-abcd-123456789012"
	testWorkspaceArn = "arn:aws:aps:eu-west-1:123456789012:workspace/" + testWorkspace
	testWorkspaceURL = "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/" + testWorkspace
)

// gatesVariant is the other side of variant's gate settings: AMP by its
// ARN alone, CloudWatch on, and the engine in a VPC with a group of its own.
var gatesVariant = map[string]string{
	"ampWorkspaceArn": testWorkspaceArn,
	"gateVpcId":       "vpc-0123456789abcdef0",
	"gateSubnetIds":   "subnet-0aaaaaaaaaaaaaaaa",
}

func TestLoadConfig_Gates(t *testing.T) {
	tests := []struct {
		name       string
		context    map[string]string
		prometheus string // PrometheusURL
		region     string // the workspace's, for SigV4
		cloudWatch bool
		subnets    []string
		groups     []string
	}{
		{name: "defaults", cloudWatch: true}, // CloudWatch is read where AWS is
		{name: "workspace alone", context: map[string]string{"ampWorkspaceArn": testWorkspaceArn},
			prometheus: testWorkspaceURL, region: "eu-west-1", cloudWatch: true}, // the query URL follows from the ARN
		{name: "workspace and a URL", context: map[string]string{"ampWorkspaceArn": testWorkspaceArn, "prometheusUrl": "https://proxy.example.com/ws"},
			prometheus: "https://proxy.example.com/ws", region: "eu-west-1", cloudWatch: true}, // the URL given wins; signed all the same
		{name: "China", context: map[string]string{"ampWorkspaceArn": "arn:aws-cn:aps:cn-north-1:123456789012:workspace/ws-1"},
			prometheus: "https://aps-workspaces.cn-north-1.amazonaws.com.cn/workspaces/ws-1", region: "cn-north-1", cloudWatch: true}, // the partition's domain
		{name: "GovCloud", context: map[string]string{"ampWorkspaceArn": "arn:aws-us-gov:aps:us-gov-west-1:123456789012:workspace/ws-2"},
			prometheus: "https://aps-workspaces.us-gov-west-1.amazonaws.com/workspaces/ws-2", region: "us-gov-west-1", cloudWatch: true},
		{name: "plain Prometheus", context: map[string]string{"prometheusUrl": "http://10.0.1.5:9090"},
			prometheus: "http://10.0.1.5:9090", cloudWatch: true}, // unsigned
		{name: "CloudWatch off", context: map[string]string{"cloudwatchGates": "false"}},
		{name: "VPC, ids trimmed, sorted, once each", cloudWatch: true,
			context: map[string]string{"gateVpcId": "vpc-11111111", "gateSubnetIds": " subnet-bbbbbbbb, subnet-aaaaaaaa,subnet-bbbbbbbb,", "gateSecurityGroupIds": "sg-22222222 ,sg-11111111"},
			subnets: []string{"subnet-aaaaaaaa", "subnet-bbbbbbbb"}, groups: []string{"sg-11111111", "sg-22222222"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(lookup(tt.context), lookup(nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.PrometheusURL != tt.prometheus || c.AMPWorkspace.Region != tt.region || c.CloudWatchGates != tt.cloudWatch ||
				!reflect.DeepEqual(c.GateSubnetIDs, tt.subnets) || !reflect.DeepEqual(c.GateSecurityGroupIDs, tt.groups) {
				t.Errorf("got prometheus %q region %q cloudwatch %v subnets %q groups %q", c.PrometheusURL, c.AMPWorkspace.Region, c.CloudWatchGates, c.GateSubnetIDs, c.GateSecurityGroupIDs)
			}
		})
	}
}

func TestLoadConfig_RefusesGates(t *testing.T) {
	vpc := "vpc-0123456789abcdef0"
	tests := []struct {
		context map[string]string
		message string
	}{
		{context: map[string]string{"prometheusUrl": "prometheus:9090"}, message: "prometheusUrl"},                                                   // no scheme: "prometheus" is taken for one
		{context: map[string]string{"prometheusUrl": "/api/v1"}, message: "prometheusUrl"},                                                           // no host
		{context: map[string]string{"alertmanagerUrl": "ftp://alertmanager:9093"}, message: "alertmanagerUrl"},                                       // http(s) only
		{context: map[string]string{"ampWorkspaceArn": testWorkspace}, message: "ampWorkspaceArn"},                                                   // the id, not the ARN
		{context: map[string]string{"ampWorkspaceArn": "arn:aws:aps:eu-west-1:123456789012:rulegroupsnamespace/ws-1/x"}, message: "ampWorkspaceArn"}, // another resource of AMP
		{context: map[string]string{"ampWorkspaceArn": "arn:aws:prometheus:eu-west-1:123456789012:workspace/ws-1"}, message: "ampWorkspaceArn"},      // AMP's service is aps
		{context: map[string]string{"ampWorkspaceArn": "arn:aws:aps:eu-west-1:1234:workspace/ws-1"}, message: "ampWorkspaceArn"},                     // an account has 12 digits
		{context: map[string]string{"ampWorkspaceArn": "arn:aws:aps::123456789012:workspace/ws-1"}, message: "ampWorkspaceArn"},                      // no region to sign for
		{context: map[string]string{"cloudwatchGates": "maybe"}, message: "cloudwatchGates"},
		{context: map[string]string{"gateVpcId": "vpc-xyz", "gateSubnetIds": "subnet-aaaaaaaa"}, message: "gateVpcId"},                                         // not an id
		{context: map[string]string{"gateVpcId": vpc}, message: "gateSubnetIds"},                                                                               // a VPC needs the engine's subnets
		{context: map[string]string{"gateSubnetIds": "subnet-aaaaaaaa"}, message: "gateVpcId"},                                                                 // subnets of which VPC?
		{context: map[string]string{"gateSecurityGroupIds": "sg-11111111"}, message: "gateVpcId"},                                                              // groups of which VPC?
		{context: map[string]string{"gateVpcId": vpc, "gateSubnetIds": "subnet-AAAAAAAA"}, message: "gateSubnetIds"},                                           // EC2 ids are lower case
		{context: map[string]string{"gateVpcId": vpc, "gateSubnetIds": "subnet-aaaaaaaa", "gateSecurityGroupIds": "default"}, message: "gateSecurityGroupIds"}, // an id, not a name
	}
	for _, tt := range tests {
		t.Run(strings.Join(sortedKeys(tt.context), "+"), func(t *testing.T) {
			_, err := LoadConfig(lookup(tt.context), lookup(nil))
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("%v: error %v, want one naming %s", tt.context, err, tt.message)
			}
		})
	}
}

// The engine, and only the engine, has the gate settings that are set.
func TestGates_EngineEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		context map[string]string
		want    map[string]any
	}{
		{name: "defaults", context: nil, want: map[string]any{gateread.EnvCloudWatch: "on"}},
		{name: "variant", context: variant, want: map[string]any{gateread.EnvPrometheusURL: variant["prometheusUrl"], gateread.EnvPrometheusSigV4Region: "eu-west-1",
			gateread.EnvAlertmanagerURL: variant["alertmanagerUrl"], gateread.EnvCloudWatch: "off"}},
		{name: "workspace alone", context: gatesVariant, want: map[string]any{gateread.EnvPrometheusURL: testWorkspaceURL, gateread.EnvPrometheusSigV4Region: "eu-west-1",
			gateread.EnvCloudWatch: "on"}},
	}
	names := []string{gateread.EnvPrometheusURL, gateread.EnvPrometheusSigV4Region, gateread.EnvAlertmanagerURL, gateread.EnvCloudWatch}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := synthesized(t, tt.context)
			for _, f := range functionSpecs {
				_, r := s.function(t, f.Name)
				got := map[string]any{}
				for _, name := range names {
					if v, ok := env(r.Properties)[name]; ok {
						got[name] = v
					}
				}
				want := map[string]any{}
				if f.Gates {
					want = tt.want
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: gate settings %v, want %v", f.Name, got, want)
				}
				if f.Gates {
					checkEngineReads(t, got)
				}
			}
		})
	}
}

// checkEngineReads: the engine's own parser (core/gate/gateread.FromEnv)
// accepts the environment and configures what it names.
func checkEngineReads(t *testing.T, e map[string]any) {
	t.Helper()
	getenv := func(name string) string { s, _ := e[name].(string); return s }
	cfg := &aws.Config{Region: "eu-west-1", Credentials: aws.AnonymousCredentials{}}
	r, err := gateread.FromEnv(getenv, cfg, time.Now, nil)
	if err != nil {
		t.Fatalf("the engine refuses its environment: %v", err)
	}
	if (r.Prometheus != nil) != (getenv(gateread.EnvPrometheusURL) != "") || (r.CloudWatch != nil) != (getenv(gateread.EnvCloudWatch) == "on") ||
		r.AlertmanagerURL != getenv(gateread.EnvAlertmanagerURL) {
		t.Errorf("the engine reads Prometheus %v, CloudWatch %v, Alertmanager %q from %v", r.Prometheus != nil, r.CloudWatch != nil, r.AlertmanagerURL, e)
	}
}

// What gates may read, for every role of the stack: CloudWatch's actions
// (on "*") only with cloudwatchGates, aps:QueryMetrics on the workspace
// alone and only with one, the network interfaces of a function in a VPC
// (the EC2 actions of AWSLambdaVPCAccessExecutionRole, not the policy with
// its logs on every group) only with a VPC; all of it for the engine and
// nothing for any other role, nor any AWS managed policy.
func TestIAM_Gates(t *testing.T) {
	tests := []struct {
		name       string
		context    map[string]string
		cloudWatch bool
		workspace  string // the ARN aps:QueryMetrics is granted on
		vpc        bool
	}{
		{name: "defaults", cloudWatch: true},
		{name: "variant", context: variant, workspace: testWorkspaceArn, vpc: true},
		{name: "workspace alone", context: gatesVariant, cloudWatch: true, workspace: testWorkspaceArn, vpc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := synthesized(t, tt.context)
			policies := s.policies(t)
			fnOfRole := map[string]functionSpec{}
			for _, f := range functionSpecs {
				_, r := s.function(t, f.Name)
				fnOfRole[roleOf(r, "Role")] = f
			}
			for id, role := range s.ofType("AWS::IAM::Role") {
				var got []string
				for _, st := range policies[id] {
					for _, a := range st.actions {
						if service, _, _ := strings.Cut(a, ":"); service != "cloudwatch" && service != "aps" && service != "ec2" {
							continue
						}
						for _, r := range st.resources {
							got = append(got, a+" on "+flatten(r))
						}
					}
				}
				for _, arn := range list(role.Properties["ManagedPolicyArns"]) {
					if p := flatten(arn); strings.Contains(p, "AWSLambdaVPCAccessExecutionRole") {
						got = append(got, p)
					}
				}
				sort.Strings(got)
				var want []string
				if fnOfRole[id].Gates {
					if tt.workspace != "" {
						want = append(want, "aps:QueryMetrics on "+tt.workspace)
					}
					if tt.cloudWatch {
						want = append(want, "cloudwatch:DescribeAlarms on *", "cloudwatch:GetMetricData on *")
					}
					if tt.vpc {
						for _, a := range vpcAccessActions {
							want = append(want, a+" on *")
						}
					}
				}
				sort.Strings(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s (%s): gate permissions %q, want %q", id, fnOfRole[id].Name, got, want)
				}
			}
		})
	}
}

// The engine runs in the gate VPC's subnets, with the operator's groups or
// one of its own, outbound only; the other functions stay out of it.
func TestGates_VPC(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		s := synthesized(t, nil)
		for _, f := range functionSpecs {
			if _, r := s.function(t, f.Name); r.Properties["VpcConfig"] != nil {
				t.Errorf("%s in a VPC without gateVpcId", f.Name)
			}
		}
		if out := s.template.FindOutputs(jsii.String("EngineSecurityGroupId"), nil); len(*out) != 0 {
			t.Error("an engine security group without a VPC")
		}
	})
	t.Run("the operator's groups", func(t *testing.T) {
		s := synthesized(t, variant)
		checkVPC(t, s, map[string]any{
			"SubnetIds":        []any{"subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb"},
			"SecurityGroupIds": []any{"sg-0123456789abcdef0", "sg-11111111"},
		})
		for id, sg := range s.ofType("AWS::EC2::SecurityGroup") {
			if sg.Properties["VpcId"] == variant["gateVpcId"] {
				t.Errorf("%s: a group of the stack in the gate VPC although gateSecurityGroupIds are given", id)
			}
		}
		if out := s.template.FindOutputs(jsii.String("EngineSecurityGroupId"), nil); len(*out) != 0 {
			t.Error("EngineSecurityGroupId output although the operator's groups are used")
		}
		for _, typ := range []string{"AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress"} {
			for id, rule := range s.ofType(typ) {
				if _, imported := rule.Properties["GroupId"].(string); imported {
					t.Errorf("%s: the stack changes the operator's group %v", id, rule.Properties["GroupId"])
				}
			}
		}
	})
	t.Run("a group of its own", func(t *testing.T) {
		s := synthesized(t, gatesVariant)
		var groupID string
		for id, sg := range s.ofType("AWS::EC2::SecurityGroup") {
			if sg.Properties["VpcId"] != gatesVariant["gateVpcId"] {
				continue
			}
			groupID = id
			egress := []any{map[string]any{"CidrIp": "0.0.0.0/0", "Description": "Allow all outbound traffic by default", "IpProtocol": "-1"}}
			if sg.Properties["SecurityGroupIngress"] != nil || !reflect.DeepEqual(sg.Properties["SecurityGroupEgress"], egress) {
				t.Errorf("%s: ingress %v egress %v, want outbound only", id, sg.Properties["SecurityGroupIngress"], sg.Properties["SecurityGroupEgress"])
			}
		}
		if groupID == "" {
			t.Fatal("no engine security group in the gate VPC")
		}
		ref := map[string]any{"Fn::GetAtt": []any{groupID, "GroupId"}}
		checkVPC(t, s, map[string]any{"SubnetIds": []any{"subnet-0aaaaaaaaaaaaaaaa"}, "SecurityGroupIds": []any{ref}})
		must(t, "output of the engine's group, for the collectors' rules", func() {
			s.template.HasOutput(jsii.String("EngineSecurityGroupId"), map[string]any{"Value": ref})
		})
		for id, rule := range s.ofType("AWS::EC2::SecurityGroupIngress") {
			if reflect.DeepEqual(rule.Properties["GroupId"], ref) {
				t.Errorf("%s: something may connect to the engine", id)
			}
		}
	})
}

// checkVPC: the engine has the VPC configuration, no other function any.
func checkVPC(t *testing.T, s *synthesis, want map[string]any) {
	t.Helper()
	for _, f := range functionSpecs {
		_, r := s.function(t, f.Name)
		got := r.Properties["VpcConfig"]
		if !f.Gates {
			if got != nil {
				t.Errorf("%s in the gate VPC: %v", f.Name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: VpcConfig %v, want %v", f.Name, got, want)
		}
	}
}
