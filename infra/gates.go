package main

// Health gates: what the engine reads between the stages of a rollout
// (core/gate/gateread.FromEnv) and what it needs for that: its settings, its
// IAM statements and, for collectors and servers in private subnets, a
// VPC. Only the function whose spec says Gates gets any of it.
// docs/deploy.md, "Gates", is the operator's side.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// ampWorkspace is an Amazon Managed Service for Prometheus workspace, as
// its ARN names it.
type ampWorkspace struct {
	Arn, Partition, Region, ID string
}

// ampWorkspaceArn is arn:<partition>:aps:<region>:<account>:workspace/<id>,
// the id as AMP's API allows it (AMP makes "ws-" and a UUID).
var ampWorkspaceArn = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov):aps:([a-z]{2}(?:-[a-z]+)+-[0-9]+):[0-9]{12}:workspace/([0-9A-Za-z][-.0-9A-Za-z_]{0,63})$`)

func parseAMPWorkspace(arn string) (ampWorkspace, bool) {
	m := ampWorkspaceArn.FindStringSubmatch(arn)
	if m == nil {
		return ampWorkspace{}, false
	}
	return ampWorkspace{Arn: arn, Partition: m[1], Region: m[2], ID: m[3]}, true
}

// queryURL is the root of the workspace's Prometheus-compatible API, to
// which the client adds /api/v1/query: for the workspace ws-0123 in
// eu-west-1, https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0123.
func (w ampWorkspace) queryURL() string {
	domain := "amazonaws.com"
	if w.Partition == "aws-cn" {
		domain = "amazonaws.com.cn"
	}
	return fmt.Sprintf("https://aps-workspaces.%s.%s/workspaces/%s", w.Region, domain, w.ID)
}

// EC2 ids: a prefix and 8 or 17 hexadecimal digits.
var (
	vpcID           = regexp.MustCompile(`^vpc-[0-9a-f]{8}(?:[0-9a-f]{9})?$`)
	subnetID        = regexp.MustCompile(`^subnet-[0-9a-f]{8}(?:[0-9a-f]{9})?$`)
	securityGroupID = regexp.MustCompile(`^sg-[0-9a-f]{8}(?:[0-9a-f]{9})?$`)
)

// loadGates resolves the gate settings of v into c and lists what is wrong
// with them, so that a typo fails the synthesis rather than every reading
// of a gate after the deployment.
func (c *Config) loadGates(v map[string]string) []string {
	var errs []string
	for _, s := range []struct{ key, url string }{{"prometheusUrl", v["prometheusUrl"]}, {"alertmanagerUrl", v["alertmanagerUrl"]}} {
		if s.url != "" && !isURL(s.url, "http", "https") {
			errs = append(errs, fmt.Sprintf("%s: %q is not an http(s) URL such as https://prometheus.internal:9090", s.key, s.url))
		}
	}
	c.PrometheusURL, c.AlertmanagerURL = v["prometheusUrl"], v["alertmanagerUrl"]
	if arn := v["ampWorkspaceArn"]; arn != "" {
		w, ok := parseAMPWorkspace(arn)
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("ampWorkspaceArn: %q is not a workspace ARN such as arn:aws:aps:eu-west-1:123456789012:workspace/ws-0123", arn))
		case c.PrometheusURL == "":
			c.PrometheusURL = w.queryURL()
		}
		c.AMPWorkspace = w
	}

	ids := func(key string, pattern *regexp.Regexp, example string) []string {
		var out []string
		for _, id := range strings.Split(v[key], ",") {
			if id = strings.TrimSpace(id); id == "" {
				continue
			}
			if !pattern.MatchString(id) {
				errs = append(errs, fmt.Sprintf("%s: %q is not an id such as %s", key, id, example))
			}
			out = append(out, id)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	c.GateVpcID = strings.TrimSpace(v["gateVpcId"])
	c.GateSubnetIDs = ids("gateSubnetIds", subnetID, "subnet-0123456789abcdef0")
	c.GateSecurityGroupIDs = ids("gateSecurityGroupIds", securityGroupID, "sg-0123456789abcdef0")
	switch {
	case c.GateVpcID == "" && (len(c.GateSubnetIDs) > 0 || len(c.GateSecurityGroupIDs) > 0):
		errs = append(errs, "gateSubnetIds, gateSecurityGroupIds: set gateVpcId, the VPC they belong to")
	case c.GateVpcID == "":
	case !vpcID.MatchString(c.GateVpcID):
		errs = append(errs, fmt.Sprintf("gateVpcId: %q is not an id such as vpc-0123456789abcdef0", c.GateVpcID))
	case len(c.GateSubnetIDs) == 0:
		errs = append(errs, "gateVpcId: set gateSubnetIds, the engine's subnets in it")
	}
	return errs
}

// onOff is a boolean as MYRIARCH_CLOUDWATCH spells it.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// grantGates lets the function read what gates name: CloudWatch metrics and
// alarms when cloudwatchGates is on, and queries of the AMP workspace when
// one is set. Prometheus and Alertmanager outside AWS need no IAM; the VPC's
// network interfaces come with the VPC (gateNetwork.place).
func grantGates(fn awslambda.Function, c Config) {
	if c.CloudWatchGates {
		// Resource "*": GetMetricData has no resource-level permissions, and
		// DescribeAlarms scoped to alarm ARNs answers without composite
		// alarms, which gates read too. The alarms a policy names are only
		// known when it runs.
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("cloudwatch:GetMetricData", "cloudwatch:DescribeAlarms"),
			Resources: jsii.Strings("*"),
		}))
	}
	if c.AMPWorkspace.Arn != "" {
		// Instant queries only (adapters/gate/gateread's Prometheus reader): no labels,
		// series or metadata, and no other workspace.
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("aps:QueryMetrics"),
			Resources: jsii.Strings(c.AMPWorkspace.Arn),
		}))
	}
}

// gateNetwork is the VPC the engine runs in to reach collectors,
// Prometheus and Alertmanager on private addresses: the operator's VPC,
// subnets and security groups, imported by id so that synthesis needs no
// AWS account (a lookup would).
type gateNetwork struct {
	vpc            awsec2.IVpc
	subnets        []awsec2.ISubnet
	securityGroups []awsec2.ISecurityGroup
	created        awsec2.SecurityGroup // the engine's own group when none was given; nil otherwise
}

// newGateNetwork is nil without gateVpcId.
func newGateNetwork(scope constructs.Construct, c Config) *gateNetwork {
	if c.GateVpcID == "" {
		return nil
	}
	// The zones are unknown without a lookup, and not needed: the subnets
	// are given. The region's (Fn::GetAZs) stand in, since CDK refuses an
	// empty list, and CDK's warning that a token cannot be selected from is
	// no concern of ours; nor are the subnets' route tables.
	vpc := awsec2.Vpc_FromVpcAttributes(scope, jsii.String("GateVpc"), &awsec2.VpcAttributes{
		VpcId:             jsii.String(c.GateVpcID),
		AvailabilityZones: awscdk.Fn_GetAzs(nil),
	})
	acknowledge(vpc, "@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones", "the engine's subnets are given by id")
	n := &gateNetwork{vpc: vpc}
	for _, id := range c.GateSubnetIDs {
		subnet := awsec2.Subnet_FromSubnetId(scope, jsii.String("GateSubnet-"+id), jsii.String(id))
		acknowledge(subnet, "@aws-cdk/aws-ec2:noSubnetRouteTableId", "the stack adds no routes to the operator's subnets")
		n.subnets = append(n.subnets, subnet)
	}
	for _, id := range c.GateSecurityGroupIDs {
		n.securityGroups = append(n.securityGroups, awsec2.SecurityGroup_FromSecurityGroupId(scope, jsii.String("GateSecurityGroup-"+id), jsii.String(id),
			&awsec2.SecurityGroupImportOptions{Mutable: jsii.Bool(false)})) // the stack never changes an operator's group
	}
	if len(n.securityGroups) == 0 {
		// Outbound only: the engine asks, nothing connects to it. The
		// collectors' groups let this one in (the stack output EngineSecurityGroupId).
		n.created = awsec2.NewSecurityGroup(scope, jsii.String("EngineSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc:              n.vpc,
			Description:      jsii.String("Myriarch " + c.Stage + " engine: gate readings and AWS APIs, outbound only"),
			AllowAllOutbound: jsii.Bool(true),
		})
		n.securityGroups = []awsec2.ISecurityGroup{n.created}
	}
	return n
}

func acknowledge(c constructs.IConstruct, warning, why string) {
	awscdk.Annotations_Of(c).AcknowledgeWarning(jsii.String(warning), jsii.String(why))
}

// vpcAccessActions are what Lambda needs of a function's role to manage
// the function's network interfaces in a VPC: the EC2 actions of the AWS
// managed policy AWSLambdaVPCAccessExecutionRole, without its logs:* on
// every log group. On "*", as there: DescribeNetworkInterfaces and
// DescribeSubnets have no resource-level permissions, and the others act
// on network interfaces that Lambda creates later, whose ids the stack
// cannot know.
var vpcAccessActions = []string{
	"ec2:AssignPrivateIpAddresses", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
	"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:UnassignPrivateIpAddresses",
}

// place puts a function in the network (nothing without one) and lets its
// role manage the function's network interfaces (vpcAccessActions).
func (n *gateNetwork) place(props *awslambda.FunctionProps, role awsiam.IRole) {
	if n == nil {
		return
	}
	props.Vpc = n.vpc
	props.VpcSubnets = &awsec2.SubnetSelection{Subnets: &n.subnets}
	props.SecurityGroups = &n.securityGroups
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(vpcAccessActions...),
		Resources: jsii.Strings("*"),
	}))
}
