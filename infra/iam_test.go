package main

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// unscopable are the only actions a policy may grant on Resource "*":
// AWS documents none of them as supporting resource-level permissions,
// but for the network interfaces of a function in a VPC.
var unscopable = map[string]bool{
	"xray:PutTraceSegments": true, "xray:PutTelemetryRecords": true, // Lambda and Step Functions tracing
	"xray:GetSamplingRules": true, "xray:GetSamplingTargets": true, // Step Functions tracing
	"logs:CreateLogDelivery": true, "logs:GetLogDelivery": true, "logs:UpdateLogDelivery": true, // Step Functions logging
	"logs:DeleteLogDelivery": true, "logs:ListLogDeliveries": true, "logs:PutResourcePolicy": true,
	"logs:DescribeResourcePolicies": true, "logs:DescribeLogGroups": true,
	"ecr:GetAuthorizationToken": true, // pulling the gateway's image
	"dynamodb:ListStreams":      true, // the event source mappings of the agents and events streams
	"cloudwatch:GetMetricData":  true, // gates: no resource-level permissions
	"cloudwatch:DescribeAlarms": true, // gates: composite alarms are only described with "*"
	// The engine in the gate VPC (gates.go, vpcAccessActions): the network
	// interfaces Lambda creates later have no ids the stack could name.
	"ec2:CreateNetworkInterface": true, "ec2:DescribeNetworkInterfaces": true, "ec2:DescribeSubnets": true,
	"ec2:DeleteNetworkInterface": true, "ec2:AssignPrivateIpAddresses": true, "ec2:UnassignPrivateIpAddresses": true,
}

// statement is one Allow statement with its actions and resources.
type statement struct {
	actions   []string
	resources []any
}

// policies returns, by the logical id of each role, the statements of
// every policy of the stack that applies to it: the inline policies
// (AWS::IAM::Policy, and a role's own Policies) and the managed policies
// the stack defines (AWS::IAM::ManagedPolicy) that the role names. AWS's
// own managed policies cannot be read offline: awsManagedPolicies lists them.
func (s *synthesis) policies(t *testing.T) map[string][]statement {
	t.Helper()
	out := map[string][]statement{}
	for id, p := range s.ofType("AWS::IAM::Policy") {
		roles := refs(p.Properties["Roles"])
		if len(roles) == 0 {
			t.Errorf("policy %s is attached to no role of the stack", id)
		}
		for _, role := range roles {
			out[role] = append(out[role], allows(p.Properties["PolicyDocument"])...)
		}
	}
	managed := s.ofType("AWS::IAM::ManagedPolicy")
	for id, role := range s.ofType("AWS::IAM::Role") {
		for _, p := range list(role.Properties["Policies"]) {
			if m, ok := p.(map[string]any); ok {
				out[id] = append(out[id], allows(m["PolicyDocument"])...)
			}
		}
		for _, arn := range list(role.Properties["ManagedPolicyArns"]) {
			for _, ref := range refs(arn) {
				if p, ok := managed[ref]; ok {
					out[id] = append(out[id], allows(p.Properties["PolicyDocument"])...)
				}
			}
		}
	}
	return out
}

// allows are the Allow statements of a policy document.
func allows(doc any) []statement {
	d, _ := doc.(map[string]any)
	var stmts []statement
	for _, raw := range list(d["Statement"]) {
		st, _ := raw.(map[string]any)
		if st["Effect"] != "Allow" {
			continue
		}
		var actions []string
		for _, a := range list(st["Action"]) {
			actions = append(actions, fmt.Sprint(a))
		}
		stmts = append(stmts, statement{actions: actions, resources: list(st["Resource"])})
	}
	return stmts
}

// awsManagedPolicies are the managed policies of each role that the stack
// does not define (AWS's own, arn:...:iam::aws:policy/...), by role.
func (s *synthesis) awsManagedPolicies() map[string][]string {
	managed := s.ofType("AWS::IAM::ManagedPolicy")
	out := map[string][]string{}
	for id, role := range s.ofType("AWS::IAM::Role") {
		for _, arn := range list(role.Properties["ManagedPolicyArns"]) {
			if ids := refs(arn); arn == nil || len(ids) == 1 && managed[ids[0]].Type != "" {
				continue
			}
			out[id] = append(out[id], flatten(arn))
		}
	}
	return out
}

func roleOf(r resource, field string) string {
	ids := refs(r.Properties[field])
	if len(ids) != 1 {
		return ""
	}
	return ids[0]
}

// contexts are the configurations whose roles differ: the defaults, every
// setting changed (variant), the other side of the gates (gatesVariant).
var contexts = []map[string]string{nil, variant, gatesVariant}

func TestIAM_NoWildcardActionsAndStarOnlyWhereAWSRequiresIt(t *testing.T) {
	for _, ctx := range contexts {
		s := synthesized(t, ctx)
		for role, stmts := range s.policies(t) {
			for _, st := range stmts {
				for _, a := range st.actions {
					if strings.Contains(a, "*") {
						t.Errorf("%s: wildcard action %s", role, a)
					}
				}
				for _, r := range st.resources {
					if r != "*" {
						continue
					}
					for _, a := range st.actions {
						if !unscopable[a] {
							t.Errorf("%s: %s on every resource", role, a)
						}
					}
				}
			}
		}
	}
}

// access of one principal, derived from its statements: its DynamoDB
// actions by resource, the Step Functions actions, the functions it may
// invoke, and every other action.
type granted struct {
	dynamo  []string // "<table>: <actions>", "<table>/index/<index>: Query" (or Scan), "<table> stream: ...", "*: ListStreams"
	states  []string // "action on resource"
	invokes []string // logical ids of functions
	other   []string // every other action
}

// dynamoResource names the resources of DynamoDB statements by table:
// {id.Arn} a table, {id.Arn}/index/<name> one of its indexes, {id.StreamArn}
// its stream.
var dynamoResource = regexp.MustCompile(`^\{([A-Za-z0-9]+)\.(Arn|StreamArn)\}(/index/[A-Za-z]+)?$`)

func (s *synthesis) granted(t *testing.T, stmts []statement) granted {
	t.Helper()
	tableByID := map[string]string{}
	for id, r := range s.ofType("AWS::DynamoDB::Table") {
		tableByID[id] = strings.TrimPrefix(fmt.Sprint(r.Properties["TableName"]), tablePrefix(s.config))
	}
	var g granted
	dynamo := map[string][]string{}
	for _, st := range stmts {
		for _, a := range st.actions {
			service, action, _ := strings.Cut(a, ":")
			switch {
			case service == "dynamodb":
				for _, r := range st.resources {
					name := flatten(r)
					if m := dynamoResource.FindStringSubmatch(name); m != nil && tableByID[m[1]] != "" {
						name = tableByID[m[1]] + m[3]
						if m[2] == "StreamArn" {
							name += " stream"
						}
					} else if name != "*" {
						t.Errorf("%s on %s, which is no table, index or stream of the stack", a, name)
					}
					dynamo[name] = append(dynamo[name], action)
				}
			case service == "states":
				for _, r := range st.resources {
					g.states = append(g.states, a+" on "+flatten(r))
				}
			case a == "lambda:InvokeFunction":
				g.invokes = append(g.invokes, refs(st.resources)...)
			default:
				g.other = append(g.other, a)
			}
		}
	}
	for name, actions := range dynamo {
		sort.Strings(actions)
		g.dynamo = append(g.dynamo, name+": "+strings.Join(unique(actions), " "))
	}
	sort.Strings(g.dynamo)
	sort.Strings(g.states)
	g.states = unique(g.states)
	sort.Strings(g.invokes)
	g.invokes = unique(g.invokes)
	sort.Strings(g.other)
	g.other = unique(g.other)
	return g
}

func unique(s []string) []string {
	var out []string
	for i, e := range s {
		if i == 0 || e != s[i-1] {
			out = append(out, e)
		}
	}
	return out
}

// wantDynamoDB is the reviewed DynamoDB policy of every function, written
// out action by action (access.go says which store calls need each): on a
// table, on an index (Query; Scan of the sparse lagging index, the
// gateway's), on a stream (the event source mapping's reads). A function not listed may touch no table. An action added to or
// removed from access.go, or any other grant that reaches a table, fails
// TestIAM_DynamoDBActionsPerFunction until this table says the same.
var wantDynamoDB = map[string][]string{
	fnEngine: {
		"agents/index/byCollector: Query", // LinkedUpdaters
		"agents: BatchGetItem GetItem PutItem",
		"rollouts: ConditionCheckItem DeleteItem GetItem PutItem UpdateItem",
		"targets: BatchGetItem PutItem Query", // TargetsOf: a version pass's follow-up
		"events: PutItem",
		"audit: PutItem",
		"gateways: Scan",
	},
	fnPlanner: {
		"agents: BatchGetItem GetItem PutItem Scan",
		"agents/index/byFleet: Query",
		"agents/index/assignment: Query",
		"rollouts: DeleteItem GetItem PutItem UpdateItem",
		"targets: BatchWriteItem PutItem Query",
		"targets/index/byAgentKind: Query",
		"objects: DeleteItem GetItem PutItem Query",
		"events: PutItem",
		"audit: PutItem",
		"gateways: Scan",
	},
	fnAgentEvent: {
		"agents/index/byCollector: Query", // LinkedUpdaters
		"agents stream: DescribeStream GetRecords GetShardIterator",
		"*: ListStreams",
		"agents: BatchGetItem GetItem PutItem",
		"rollouts: ConditionCheckItem DeleteItem GetItem PutItem UpdateItem",
		"targets: BatchGetItem PutItem Query",
		"objects: GetItem Query",
		"events: PutItem",
		"audit: PutItem",
		"gateways: Scan",
	},
	fnAPI: {
		"agents/index/byCollector: Query", // LinkedUpdaters
		"agents: BatchGetItem GetItem PutItem Scan",
		"agents/index/byFleet: Query",
		"agents/index/byName: Query",
		"agents/index/assignment: Query",
		"rollouts: BatchGetItem ConditionCheckItem DeleteItem GetItem PutItem UpdateItem",
		"rollouts/index/byFleetKind: Query",
		"rollouts/index/byCreated: Query",
		"targets: PutItem Query",
		"targets/index/byAgentKind: Query",
		"objects: BatchWriteItem DeleteItem GetItem PutItem Query",
		"events: PutItem Query",
		"events/index/feed: Query",
		"events/index/feedByFleet: Query",
		"audit: PutItem Query",
		"gateways: Scan",
	},
	fnReleases: {
		"objects: PutItem Query",
	},
	fnNotify: {
		"events stream: DescribeStream GetRecords GetShardIterator",
		"*: ListStreams",
	},
	fnWatchdog: {
		"objects: GetItem Query",
		"rollouts: GetItem",
	},
}

// wantGatewayDynamoDB is the gateway task's.
var wantGatewayDynamoDB = []string{
	"agents: BatchGetItem GetItem PutItem",
	"agents/index/laggingDesired: Scan",
	"objects: GetItem Query",
	"gateways: PutItem",
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestIAM_DynamoDBActionsPerFunction(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, fn := s.function(t, f.Name)
			if got, want := s.granted(t, policies[roleOf(fn, "Role")]).dynamo, sorted(wantDynamoDB[f.Name]); !reflect.DeepEqual(got, want) {
				t.Errorf("DynamoDB actions\n got %q\nwant %q", got, want)
			}
		})
	}
	for name := range wantDynamoDB {
		if !slices.ContainsFunc(functionSpecs, func(f functionSpec) bool { return f.Name == name }) {
			t.Errorf("wantDynamoDB lists %s, which the app does not deploy", name)
		}
	}
}

// The audit log is append-only in IAM too: no role of the stack, in any
// configuration, may change or delete an entry, by any action or on any
// resource that covers the audit table; and nothing has dynamodb:* (or any
// wildcard DynamoDB action). Those that read it read with Query alone.
func TestIAM_AuditTableIsAppendOnly(t *testing.T) {
	forbidden := map[string]bool{"UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true,
		"PartiQLUpdate": true, "PartiQLDelete": true, "PartiQLInsert": true, "ImportTable": true, "DeleteTable": true, "UpdateTable": true}
	for _, ctx := range contexts {
		s := synthesized(t, ctx)
		auditID, _ := s.table(t, tables.Audit.Name)
		for role, stmts := range s.policies(t) {
			for _, st := range stmts {
				for _, a := range st.actions {
					service, action, _ := strings.Cut(a, ":")
					if service != "dynamodb" && service != "*" {
						continue
					}
					if strings.Contains(a, "*") {
						t.Errorf("%s: %s", role, a)
					}
					for _, r := range st.resources {
						coversAudit := r == "*" || strings.HasPrefix(flatten(r), "{"+auditID+".") || strings.Contains(flatten(r), "audit")
						if coversAudit && forbidden[action] {
							t.Errorf("%s: %s on %s: the audit log is append-only", role, a, flatten(r))
						} else if coversAudit && action != "PutItem" && action != "Query" && action != "ListStreams" {
							// ListStreams (on "*" for the stream consumers) lists
							// streams, and the audit table has none.
							t.Errorf("%s: %s on %s: writers of the audit log only put, readers only query", role, a, flatten(r))
						}
					}
				}
			}
		}
	}
}

// Every function writes its logs to its own log group, which the stack
// creates with a retention (so no logs:CreateLogGroup), and may write to no
// other: logs:CreateLogStream and logs:PutLogEvents on that group's ARN, no
// other logs action, and no AWS managed policy, since those cannot be read
// here and the ones Lambda offers allow logs on every group of the account.
func TestIAM_FunctionLogsOnlyToTheirOwnGroup(t *testing.T) {
	for _, ctx := range contexts {
		s := synthesized(t, ctx)
		policies := s.policies(t)
		managed := s.awsManagedPolicies()
		groupID := map[string]string{} // log group name -> logical id
		for id, g := range s.ofType("AWS::Logs::LogGroup") {
			groupID[fmt.Sprint(g.Properties["LogGroupName"])] = id
		}
		for _, f := range functionSpecs {
			_, fn := s.function(t, f.Name)
			role := roleOf(fn, "Role")
			groupID, ok := groupID["/aws/lambda/"+functionName(s.config, f.Name)]
			if !ok {
				t.Errorf("%s: no log group /aws/lambda/%s in the stack", f.Name, functionName(s.config, f.Name))
				continue
			}
			group := s.resources[groupID]
			if group.Properties["RetentionInDays"] != float64(30) {
				t.Errorf("%s: log group retention %v, want 30 days", f.Name, group.Properties["RetentionInDays"])
			}
			if got := refs(fn.Properties["LoggingConfig"]); !reflect.DeepEqual(got, []string{groupID}) {
				t.Errorf("%s: logs to %v, want its group %s", f.Name, got, groupID)
			}
			var logs []string
			for _, st := range policies[role] {
				for _, a := range st.actions {
					if strings.HasPrefix(a, "logs:") {
						for _, r := range st.resources {
							logs = append(logs, a+" on "+flatten(r))
						}
					}
				}
			}
			want := []string{"logs:CreateLogStream on {" + groupID + ".Arn}", "logs:PutLogEvents on {" + groupID + ".Arn}"}
			if sort.Strings(logs); !reflect.DeepEqual(logs, want) {
				t.Errorf("%s: logs permissions %q, want %q", f.Name, logs, want)
			}
			for _, p := range managed[role] {
				t.Errorf("%s: AWS managed policy %s on its role (AWSLambdaBasicExecutionRole and AWSLambdaVPCAccessExecutionRole allow logs on every log group)", f.Name, p)
			}
		}
	}
}

func TestIAM_EachFunctionGetsExactlyWhatItsSpecLists(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	smArn := "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-rollout"
	executionsArn := "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:execution:myriarch-test-rollout:*"
	plannerID, _ := s.function(t, fnPlanner)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, fn := s.function(t, f.Name)
			g := s.granted(t, policies[roleOf(fn, "Role")])
			var states []string
			if f.DescribeExecutions {
				states = append(states, "states:DescribeExecution on "+executionsArn)
			}
			if f.SendTaskResponse {
				states = append(states, "states:SendTaskSuccess on "+smArn)
			}
			if f.StartExecution {
				states = append(states, "states:StartExecution on "+smArn)
			}
			if !reflect.DeepEqual(g.states, states) {
				t.Errorf("Step Functions %v, want %v", g.states, states)
			}
			if (len(states) > 0) != (env(fn.Properties)[envStateMachineArn] != nil) {
				t.Errorf("%s = %v with Step Functions permissions %v", envStateMachineArn, env(fn.Properties)[envStateMachineArn], states)
			}
			var invokes []string
			if f.InvokesPlanner {
				invokes = []string{plannerID}
			}
			if !reflect.DeepEqual(g.invokes, invokes) {
				t.Errorf("invokes %v, want %v", g.invokes, invokes)
			}
			other := []string{"logs:CreateLogStream", "logs:PutLogEvents", "xray:PutTelemetryRecords", "xray:PutTraceSegments"}
			if f.Name == fnAgentEvent || f.Name == fnNotify { // the stream's dead-letter queue
				other = append(other, "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage")
			}
			if f.PublishesEvents { // TestNotifications_LeastPrivilege checks the resource: the bus
				other = append(other, "events:PutEvents")
			}
			if f.ExecutorSecrets { // TestIAM_ExecutorSecrets checks the resource: the stage's prefix
				other = append(other, "secretsmanager:GetSecretValue")
			}
			if f.Gates { // CloudWatch gates are on by default; TestIAM_Gates checks every combination
				other = append(other, "cloudwatch:DescribeAlarms", "cloudwatch:GetMetricData")
			}
			if sort.Strings(other); !reflect.DeepEqual(g.other, other) {
				t.Errorf("other actions %v, want %v", g.other, other)
			}
		})
	}
}

// Rules functionSpecs and functionTables must keep, whatever they say in detail.
func TestIAM_Invariants(t *testing.T) {
	if len(functionTables[fnAuthorizer]) != 0 {
		t.Errorf("the authorizer uses tables %v: it only checks tokens against its environment", functionTables[fnAuthorizer])
	}
	for _, f := range functionSpecs {
		if f.StartExecution && f.Name != fnPlanner && f.Name != fnEngine && f.Name != fnWatchdog {
			t.Errorf("%s starts executions: only the planner (one per rollout), the engine (continue as new) and the watchdog (a stranded rollout) do", f.Name)
		}
		audit := functionTables[f.Name][tables.Audit.Name]
		if slices.ContainsFunc(audit.Actions, func(a dynamoAction) bool { return a != putItem && a != query }) || len(audit.QueryIndexes) > 0 || len(audit.ScanIndexes) > 0 {
			t.Errorf("%s: %+v on the audit table, which is only appended to (PutItem) and queried", f.Name, audit)
		}
	}
}

func TestIAM_StateMachineInvokesOnlyItsTasks(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	engineID, _ := s.function(t, fnEngine)
	for id, sm := range s.ofType("AWS::StepFunctions::StateMachine") {
		g := s.granted(t, policies[roleOf(sm, "RoleArn")])
		if len(g.dynamo) != 0 || len(g.states) != 0 || !reflect.DeepEqual(g.invokes, []string{engineID}) {
			t.Errorf("%s: DynamoDB %v, states %v, invokes %v; want only the engine", id, g.dynamo, g.states, g.invokes)
		}
	}
}

func TestIAM_GatewayTask(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	for _, td := range s.ofType("AWS::ECS::TaskDefinition") {
		task := s.granted(t, policies[roleOf(td, "TaskRoleArn")])
		if want := sorted(wantGatewayDynamoDB); !reflect.DeepEqual(task.dynamo, want) || len(task.states) != 0 || len(task.invokes) != 0 || len(task.other) != 0 {
			t.Errorf("task role: DynamoDB %q states %v invokes %v other %v; want only %q", task.dynamo, task.states, task.invokes, task.other, want)
		}
		exec := s.granted(t, policies[roleOf(td, "ExecutionRoleArn")])
		want := []string{"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetAuthorizationToken", "ecr:GetDownloadUrlForLayer",
			"logs:CreateLogStream", "logs:PutLogEvents", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}
		if len(exec.dynamo) != 0 || !reflect.DeepEqual(exec.other, want) {
			t.Errorf("execution role: DynamoDB %v, actions %v; want %v", exec.dynamo, exec.other, want)
		}
	}
}
