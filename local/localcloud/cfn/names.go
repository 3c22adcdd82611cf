package cfn

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// names answers Ref and Fn::GetAtt for the resources of one template in
// the local account: the physical names CloudFormation would give them
// (a name property when the template sets one, else "<stack>-<logicalID>")
// and the ARNs the services build from those names.
type names struct {
	t      *Template
	types  map[string]string         // logical id → resource type
	props  map[string]map[string]any // logical id → unresolved properties (name properties are plain strings in CDK's output)
	params map[string]any
	attrs  map[string]string // "<id>.<attr>" → value known only to the running cloud
}

// nameProperty is the property that names a resource of each type, when
// the template sets it.
var nameProperty = map[string]string{
	"AWS::Lambda::Function":                     "FunctionName",
	"AWS::IAM::Role":                            "RoleName",
	"AWS::DynamoDB::Table":                      "TableName",
	"AWS::SQS::Queue":                           "QueueName",
	"AWS::SecretsManager::Secret":               "Name",
	"AWS::Events::EventBus":                     "Name",
	"AWS::Events::Rule":                         "Name",
	"AWS::StepFunctions::StateMachine":          "StateMachineName",
	"AWS::Logs::LogGroup":                       "LogGroupName",
	"AWS::SNS::Topic":                           "TopicName",
	"AWS::ECS::Cluster":                         "ClusterName",
	"AWS::CloudWatch::Alarm":                    "AlarmName",
	"AWS::ApiGateway::Stage":                    "StageName",
	"AWS::ElasticLoadBalancingV2::LoadBalancer": "Name",
}

// name is the physical name of a resource.
func (n *names) name(id string) string {
	if p, ok := nameProperty[n.types[id]]; ok {
		if v, ok := n.props[id][p].(string); ok && v != "" {
			return v
		}
	}
	return n.t.StackName + "-" + id
}

// shortID is a stable service-style id (a REST API's, a resource's), made
// from the logical id so that every run names things alike.
func shortID(id string, size int) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:size]
}

func (n *names) arn(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", n.t.Partition, service, n.t.Region, n.t.Account, resource)
}

// ref is what Ref returns for a logical id, a parameter or a pseudo
// parameter.
func (n *names) ref(id string) (string, bool) {
	switch id {
	case "AWS::Region":
		return n.t.Region, true
	case "AWS::AccountId":
		return n.t.Account, true
	case "AWS::Partition":
		return n.t.Partition, true
	case "AWS::URLSuffix":
		return "amazonaws.com", true
	case "AWS::StackName":
		return n.t.StackName, true
	case "AWS::StackId":
		return n.arn("cloudformation", "stack/"+n.t.StackName+"/local"), true
	}
	if v, ok := n.params[id]; ok {
		return fmt.Sprint(v), true
	}
	typ, ok := n.types[id]
	if !ok {
		return "", false
	}
	name := n.name(id)
	switch typ {
	case "AWS::SQS::Queue":
		return fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", n.t.Region, n.t.Account, name), true
	case "AWS::SecretsManager::Secret", "AWS::StepFunctions::StateMachine", "AWS::SNS::Topic",
		"AWS::ECS::TaskDefinition", "AWS::ECS::Service", "AWS::ElasticLoadBalancingV2::LoadBalancer",
		"AWS::ElasticLoadBalancingV2::Listener", "AWS::ElasticLoadBalancingV2::TargetGroup":
		return n.arnOf(id, typ, name), true
	case "AWS::ApiGateway::RestApi", "AWS::ApiGateway::Resource", "AWS::ApiGateway::Authorizer", "AWS::ApiGateway::Deployment":
		return shortID(id, 10), true
	}
	if strings.HasPrefix(typ, "AWS::EC2::") {
		return ec2ID(typ, id), true
	}
	return name, true
}

// ec2ID is an id in EC2's form (vpc-…, subnet-…, sg-…) for the network
// resources the local cloud does not run.
func ec2ID(typ, id string) string {
	prefix := map[string]string{"AWS::EC2::VPC": "vpc", "AWS::EC2::Subnet": "subnet", "AWS::EC2::SecurityGroup": "sg",
		"AWS::EC2::InternetGateway": "igw", "AWS::EC2::RouteTable": "rtb", "AWS::EC2::VPCEndpoint": "vpce"}[typ]
	if prefix == "" {
		prefix = "local"
	}
	return prefix + "-" + shortID(id, 17)
}

// arnOf is the ARN of a resource of a type the local cloud names.
func (n *names) arnOf(id, typ, name string) string {
	switch typ {
	case "AWS::Lambda::Function":
		return n.arn("lambda", "function:"+name)
	case "AWS::IAM::Role":
		return fmt.Sprintf("arn:%s:iam::%s:role/%s", n.t.Partition, n.t.Account, name)
	case "AWS::DynamoDB::Table":
		return n.arn("dynamodb", "table/"+name)
	case "AWS::SQS::Queue":
		return n.arn("sqs", name)
	case "AWS::SecretsManager::Secret":
		// Secrets Manager appends a dash and six random characters.
		return n.arn("secretsmanager", "secret:"+name+"-"+shortID(name, 6))
	case "AWS::Events::EventBus":
		return n.arn("events", "event-bus/"+name)
	case "AWS::Events::Rule":
		if bus, ok := n.props[id]["EventBusName"].(string); ok && bus != "" && bus != "default" {
			return n.arn("events", "rule/"+bus+"/"+name)
		}
		return n.arn("events", "rule/"+name)
	case "AWS::StepFunctions::StateMachine":
		return n.arn("states", "stateMachine:"+name)
	case "AWS::Logs::LogGroup":
		return n.arn("logs", "log-group:"+name+":*")
	case "AWS::SNS::Topic":
		return n.arn("sns", name)
	case "AWS::CloudWatch::Alarm":
		return n.arn("cloudwatch", "alarm:"+name)
	case "AWS::ECS::Cluster":
		return n.arn("ecs", "cluster/"+name)
	case "AWS::ECS::TaskDefinition":
		return n.arn("ecs", "task-definition/"+name+":1")
	case "AWS::ECS::Service":
		return n.arn("ecs", "service/"+name)
	case "AWS::ElasticLoadBalancingV2::LoadBalancer":
		return n.arn("elasticloadbalancing", "loadbalancer/"+n.elbName(id))
	case "AWS::ElasticLoadBalancingV2::Listener":
		return n.arn("elasticloadbalancing", "listener/net/"+id+"/"+shortID(id, 16)+"/"+shortID(id+"/", 16))
	case "AWS::ElasticLoadBalancingV2::TargetGroup":
		return n.arn("elasticloadbalancing", n.targetGroupName(id))
	}
	return n.arn(strings.ToLower(strings.Split(typ, "::")[1]), id)
}

// elbName is a load balancer's "full name", net/<name>/<id>.
func (n *names) elbName(id string) string { return "net/" + id + "/" + shortID(id, 16) }

// targetGroupName is a target group's "full name", targetgroup/<name>/<id>.
func (n *names) targetGroupName(id string) string {
	return "targetgroup/" + id + "/" + shortID(id, 16)
}

// getAtt answers Fn::GetAtt.
func (n *names) getAtt(id, attr string) (string, error) {
	if v, ok := n.attrs[id+"."+attr]; ok {
		return v, nil
	}
	typ, ok := n.types[id]
	if !ok {
		return "", fmt.Errorf("Fn::GetAtt %s.%s: no resource %s", id, attr, id)
	}
	name := n.name(id)
	switch {
	case attr == "Arn":
		return n.arnOf(id, typ, name), nil
	case typ == "AWS::Events::EventBus" && attr == "Name",
		typ == "AWS::StepFunctions::StateMachine" && attr == "Name",
		typ == "AWS::SQS::Queue" && attr == "QueueName",
		typ == "AWS::ECS::Service" && attr == "Name":
		return name, nil
	case typ == "AWS::SQS::Queue" && attr == "QueueUrl":
		v, _ := n.ref(id)
		return v, nil
	case typ == "AWS::ElasticLoadBalancingV2::LoadBalancer" && attr == "LoadBalancerFullName":
		return n.elbName(id), nil
	case typ == "AWS::ElasticLoadBalancingV2::LoadBalancer" && attr == "DNSName":
		return id + ".elb.localhost", nil
	case typ == "AWS::ElasticLoadBalancingV2::TargetGroup" && attr == "TargetGroupFullName":
		return n.targetGroupName(id), nil
	case typ == "AWS::ApiGateway::RestApi" && attr == "RootResourceId":
		return shortID(id+"/", 10), nil
	case typ == "AWS::DynamoDB::Table" && attr == "StreamArn":
		return "", fmt.Errorf("Fn::GetAtt %s.StreamArn: the table's stream is known only once the table exists (Options.Attributes)", id)
	case strings.HasPrefix(typ, "AWS::EC2::") || strings.HasPrefix(typ, "AWS::ElasticLoadBalancingV2::") ||
		strings.HasPrefix(typ, "AWS::ECS::") || strings.HasPrefix(typ, "AWS::ApplicationAutoScaling::"):
		// The network, the load balancer and the containers' service are
		// not emulated (the gateway runs as a local process): their other
		// attributes are placeholders that nothing run locally reads.
		return "unemulated:" + id + "." + attr, nil
	}
	return "", fmt.Errorf("Fn::GetAtt %s.%s: the local cloud does not know attribute %s of %s", id, attr, attr, typ)
}
