package main

import (
	"fmt"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/delivery"
)

// grantFunctions gives each function exactly what its functionSpec and its
// functionTables entry list: its DynamoDB actions per table and index, the
// Step Functions actions on the rollout state machine (and its executions)
// only, the planner's invocation, what the configured gates read, and
// events:PutEvents on the notifications bus only. Nothing else is granted
// to a function role.
func grantFunctions(c Config, fns Functions, ts Tables, stateMachineArn, executionsArn *string, bus awsevents.IEventBus) {
	for name := range functionTables {
		if _, ok := fns[name]; !ok {
			panic(fmt.Sprintf("functionTables lists %s, which functionSpecs does not deploy", name))
		}
	}
	for _, f := range functionSpecs {
		fn := fns[f.Name]
		grantTables(ts, functionTables[f.Name], fn)
		var actions []*string
		if f.StartExecution {
			actions = append(actions, jsii.String("states:StartExecution"))
		}
		if f.SendTaskResponse {
			// The tasks and the actions only ever wake an execution (execution.Waker).
			actions = append(actions, jsii.String("states:SendTaskSuccess"))
		}
		if len(actions) > 0 {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   &actions,
				Resources: &[]*string{stateMachineArn},
			}))
		}
		if f.DescribeExecutions {
			// The watchdog: is the execution a rollout recorded still running?
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings("states:DescribeExecution"),
				Resources: &[]*string{executionsArn},
			}))
		}
		if len(actions) > 0 || f.DescribeExecutions {
			fn.AddEnvironment(jsii.String(envStateMachineArn), stateMachineArn, nil)
		}
		if f.InvokesPlanner {
			planner := fns[fnPlanner]
			planner.GrantInvoke(fn)
			fn.AddEnvironment(jsii.String(envPlannerFunction), planner.FunctionName(), nil)
		}
		if f.Gates {
			grantGates(fn, c)
		}
		if f.ExecutorSecrets {
			grantExecutorSecrets(fn, c)
		}
		if f.PublishesEvents {
			bus.GrantPutEventsTo(fn, nil)
			fn.AddEnvironment(jsii.String(delivery.EnvEventBus), bus.EventBusName(), nil)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
