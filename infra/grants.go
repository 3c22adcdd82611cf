package main

import (
	"fmt"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/pkg/delivery"
)

// grantFunctions gives each function exactly what its functionSpec lists:
// its tables (and their indexes) through the tables' grant methods, the
// Step Functions actions on the rollout state machine only, the planner's
// invocation, what the configured gates read, and events:PutEvents on the
// notifications bus only. Nothing else is granted to a function role.
func grantFunctions(c Config, fns Functions, ts Tables, stateMachineArn *string, bus awsevents.IEventBus) {
	for _, f := range functionSpecs {
		fn := fns[f.Name]
		grantTables(ts, f.Tables, fn)
		var actions []*string
		if f.StartExecution {
			actions = append(actions, jsii.String("states:StartExecution"))
		}
		if f.SendTaskResponse {
			// The tasks and the actions only ever wake an execution (enginetask.Wake).
			actions = append(actions, jsii.String("states:SendTaskSuccess"))
		}
		if len(actions) > 0 {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   &actions,
				Resources: &[]*string{stateMachineArn},
			}))
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

// grantTables grants each table's access to grantee, in name order so that
// the synthesized policies do not change from one synth to the next.
func grantTables(ts Tables, want map[string]access, grantee awsiam.IGrantable) {
	for _, table := range sortedKeys(want) {
		switch want[table] {
		case read:
			ts[table].GrantReadData(grantee)
		case write:
			ts[table].GrantWriteData(grantee)
		case readWrite:
			ts[table].GrantReadWriteData(grantee)
		default:
			panic(fmt.Sprintf("table %s: no access level %d", table, want[table]))
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
