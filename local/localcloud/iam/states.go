package iam

import "fmt"

// statesField names the request field that holds each Step Functions
// operation's resource: the state machine or the execution.
var statesField = map[string]string{
	"StartExecution": "stateMachineArn", "StartSyncExecution": "stateMachineArn",
	"DescribeStateMachine": "stateMachineArn", "ListExecutions": "stateMachineArn",
	"UpdateStateMachine": "stateMachineArn", "DeleteStateMachine": "stateMachineArn",
	"DescribeExecution": "executionArn", "StopExecution": "executionArn",
	"GetExecutionHistory": "executionArn", "DescribeStateMachineForExecution": "executionArn",
	"RedriveExecution": "executionArn",
}

// statesAccesses. SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat
// list no resource type in the Service Authorization Reference (so a
// grant on "*" always works), yet the service evaluates them on the state
// machine whose execution issued the token: its AccessDenied messages name
// "resource: arn:aws:states:…:stateMachine:<name>", and a grant on that
// ARN is enough (aws-cdk#8486's tests). So: the state machine when the
// token is known, "*" otherwise.
func statesAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	action := "states:" + op
	switch op {
	case "SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat":
		if s.TaskTokenStateMachine != nil {
			if arn, ok := s.TaskTokenStateMachine(b.str("taskToken")); ok {
				return []Access{{action, arn}}, nil
			}
		}
		return []Access{{action, "*"}}, nil
	case "ListStateMachines", "ListActivities":
		return []Access{{action, "*"}}, nil
	}
	field, ok := statesField[op]
	if !ok {
		return nil, fmt.Errorf("the local cloud does not know the Step Functions operation %s", op)
	}
	arn := b.str(field)
	if arn == "" {
		return nil, fmt.Errorf("no %s", field)
	}
	return []Access{{action, arn}}, nil
}
