package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// unscopable are the only actions a policy may grant on Resource "*":
// AWS documents none of them as supporting resource-level permissions.
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
}

// statement is one Allow statement with its actions and resources.
type statement struct {
	actions   []string
	resources []any
}

// policies returns the statements of every inline policy by the logical
// id of the role it is attached to.
func (s *synthesis) policies(t *testing.T) map[string][]statement {
	t.Helper()
	out := map[string][]statement{}
	for id, p := range s.ofType("AWS::IAM::Policy") {
		doc := p.Properties["PolicyDocument"].(map[string]any)
		var stmts []statement
		for _, raw := range list(doc["Statement"]) {
			st := raw.(map[string]any)
			if st["Effect"] != "Allow" {
				continue
			}
			var actions []string
			for _, a := range list(st["Action"]) {
				actions = append(actions, fmt.Sprint(a))
			}
			stmts = append(stmts, statement{actions: actions, resources: list(st["Resource"])})
		}
		roles := refs(p.Properties["Roles"])
		if len(roles) == 0 {
			t.Errorf("policy %s is attached to no role of the stack", id)
		}
		for _, role := range roles {
			out[role] = append(out[role], stmts...)
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

func TestIAM_NoWildcardActionsAndStarOnlyWhereAWSRequiresIt(t *testing.T) {
	for _, ctx := range []map[string]string{nil, variant, gatesVariant} {
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

// access of one principal, derived from its statements: per table, read
// or read-write; the Step Functions actions; the functions it may invoke.
type granted struct {
	tables  map[string]access
	states  []string // "action on resource"
	invokes []string // logical ids of functions
	other   []string // every other action
}

func (s *synthesis) granted(t *testing.T, stmts []statement) granted {
	t.Helper()
	tableByID := map[string]string{}
	for id, r := range s.ofType("AWS::DynamoDB::Table") {
		tableByID[id] = strings.TrimPrefix(fmt.Sprint(r.Properties["TableName"]), tablePrefix(s.config))
	}
	g := granted{tables: map[string]access{}}
	for _, st := range stmts {
		for _, a := range st.actions {
			service, action, _ := strings.Cut(a, ":")
			switch {
			case service == "dynamodb" && a != "dynamodb:ListStreams" && !isStreamOnly(st):
				for _, id := range refs(st.resources) {
					name, ok := tableByID[id]
					if !ok {
						t.Errorf("%s on %s, which is not a table", a, id)
						continue
					}
					switch {
					case isWrite(action):
						g.tables[name] |= write
					case isRead(action):
						g.tables[name] |= read
					}
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
	sort.Strings(g.states)
	g.states = unique(g.states)
	sort.Strings(g.invokes)
	g.invokes = unique(g.invokes)
	sort.Strings(g.other)
	g.other = unique(g.other)
	return g
}

// isStreamOnly tells the stream statement of an event source mapping
// (on a table's StreamArn) from the table grants.
func isStreamOnly(st statement) bool {
	for _, r := range st.resources {
		if m, ok := r.(map[string]any); ok {
			if g, ok := m["Fn::GetAtt"].([]any); ok && len(g) == 2 && g[1] == "StreamArn" {
				return true
			}
		}
	}
	return false
}

func isRead(action string) bool {
	switch action {
	case "GetItem", "BatchGetItem", "Query", "Scan", "ConditionCheckItem":
		return true
	}
	return false
}

func isWrite(action string) bool {
	switch action {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem":
		return true
	}
	return false
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

func TestIAM_EachFunctionGetsExactlyWhatItsSpecLists(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	smArn := "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-rollout"
	plannerID, _ := s.function(t, fnPlanner)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, fn := s.function(t, f.Name)
			g := s.granted(t, policies[roleOf(fn, "Role")])
			if !reflect.DeepEqual(g.tables, f.Tables) {
				t.Errorf("tables %v, spec %v", g.tables, f.Tables)
			}
			var states []string
			if f.SendTaskResponse {
				states = append(states, "states:SendTaskSuccess on "+smArn)
			}
			if f.StartExecution {
				states = append(states, "states:StartExecution on "+smArn)
			}
			if !reflect.DeepEqual(g.states, states) {
				t.Errorf("Step Functions %v, want %v", g.states, states)
			}
			var invokes []string
			if f.InvokesPlanner {
				invokes = []string{plannerID}
			}
			if !reflect.DeepEqual(g.invokes, invokes) {
				t.Errorf("invokes %v, want %v", g.invokes, invokes)
			}
			other := []string{"xray:PutTelemetryRecords", "xray:PutTraceSegments"}
			if f.Name == fnAgentEvent || f.Name == fnNotify { // the stream and its dead-letter queue
				other = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams",
					"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage", "xray:PutTelemetryRecords", "xray:PutTraceSegments"}
			}
			if f.PublishesEvents { // TestNotifications_LeastPrivilege checks the resource: the bus
				other = append(other, "events:PutEvents")
				sort.Strings(other)
			}
			if f.ExecutorSecrets { // TestIAM_ExecutorSecrets checks the resource: the stage's prefix
				other = append(other, "secretsmanager:GetSecretValue")
				sort.Strings(other)
			}
			if f.Gates { // CloudWatch gates are on by default; TestIAM_Gates checks every combination
				other = append([]string{"cloudwatch:DescribeAlarms", "cloudwatch:GetMetricData"}, other...)
			}
			if !reflect.DeepEqual(g.other, other) {
				t.Errorf("other actions %v, want %v", g.other, other)
			}
		})
	}
}

// Rules the spec table must keep, whatever it says in detail.
func TestIAM_Invariants(t *testing.T) {
	for _, f := range functionSpecs {
		if f.Name == fnAuthorizer {
			for table, a := range f.Tables {
				if a != read {
					t.Errorf("the authorizer may write %s: it only checks tokens", table)
				}
			}
		}
		if f.StartExecution && f.Name != fnPlanner && f.Name != fnEngine {
			t.Errorf("%s starts executions: only the planner (one per rollout) and the engine (continue as new) do", f.Name)
		}
	}
}

func TestIAM_StateMachineInvokesOnlyItsTasks(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	engineID, _ := s.function(t, fnEngine)
	for id, sm := range s.ofType("AWS::StepFunctions::StateMachine") {
		g := s.granted(t, policies[roleOf(sm, "RoleArn")])
		if len(g.tables) != 0 || len(g.states) != 0 || !reflect.DeepEqual(g.invokes, []string{engineID}) {
			t.Errorf("%s: tables %v, states %v, invokes %v; want only the engine", id, g.tables, g.states, g.invokes)
		}
	}
}

func TestIAM_GatewayTask(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	for _, td := range s.ofType("AWS::ECS::TaskDefinition") {
		task := s.granted(t, policies[roleOf(td, "TaskRoleArn")])
		if !reflect.DeepEqual(task.tables, gatewayTables) || len(task.states) != 0 || len(task.invokes) != 0 || len(task.other) != 0 {
			t.Errorf("task role: tables %v states %v invokes %v other %v; want only %v", task.tables, task.states, task.invokes, task.other, gatewayTables)
		}
		exec := s.granted(t, policies[roleOf(td, "ExecutionRoleArn")])
		want := []string{"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetAuthorizationToken", "ecr:GetDownloadUrlForLayer",
			"logs:CreateLogStream", "logs:PutLogEvents", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}
		if len(exec.tables) != 0 || !reflect.DeepEqual(exec.other, want) {
			t.Errorf("execution role: tables %v, actions %v; want %v", exec.tables, exec.other, want)
		}
	}
}
