package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
	"github.com/myriarch/myriarch/local/sfnlocal"
)

// stateMachine is one AWS::StepFunctions::StateMachine: its definition
// from the asset file the template points at, with the template's
// DefinitionSubstitutions made, and the role its tasks run as.
type stateMachine struct {
	Name, RoleArn, Definition string
}

func stateMachineOf(t *cfn.Template, id string) (stateMachine, error) {
	p := cfn.Props(t.Resources[id].Properties)
	name, role := p.Str("StateMachineName"), p.Str("RoleArn")
	var def string
	switch {
	case p["DefinitionString"] != nil:
		def = p.Str("DefinitionString")
	case p["DefinitionS3Location"] != nil:
		key := p.Obj("DefinitionS3Location").Str("Key")
		b, err := os.ReadFile(filepath.Join(t.Dir, "asset."+key))
		if err != nil {
			return stateMachine{}, fmt.Errorf("state machine %s: its definition asset: %w", id, err)
		}
		def = string(b)
	default:
		return stateMachine{}, fmt.Errorf("state machine %s: no DefinitionString or DefinitionS3Location", id)
	}
	subs := p.Obj("DefinitionSubstitutions")
	for k, v := range subs {
		def = strings.ReplaceAll(def, "${"+k+"}", fmt.Sprint(v))
	}
	if i := strings.Index(def, "${"); i >= 0 {
		return stateMachine{}, fmt.Errorf("state machine %s: %q has no substitution", id, def[i:min(len(def), i+40)])
	}
	if name == "" || role == "" {
		return stateMachine{}, fmt.Errorf("state machine %s: StateMachineName and RoleArn are needed", id)
	}
	return stateMachine{Name: name, RoleArn: role, Definition: def}, nil
}

// createStateMachines creates each state machine in the local Step
// Functions endpoint, as CloudFormation does with its own credentials, and
// registers every Lambda function its tasks may name: an invocation is
// first held to the state machine role's policy (lambda:InvokeFunction),
// then runs in the Lambda runtime.
func createStateMachines(ctx context.Context, t *cfn.Template, srv *sfnlocal.Server, client *sfn.Client, invoke lambdaInvoker, allowed roleCheck) error {
	for _, id := range t.OfType("AWS::StepFunctions::StateMachine") {
		sm, err := stateMachineOf(t, id)
		if err != nil {
			return err
		}
		if _, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(sm.Name), RoleArn: aws.String(sm.RoleArn), Definition: aws.String(sm.Definition)}); err != nil {
			return fmt.Errorf("state machine %s: %w", id, err)
		}
		for _, fid := range t.OfType("AWS::Lambda::Function") {
			arn, role := t.Arn(fid), sm.RoleArn
			srv.RegisterLambda(arn, func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
				ok, err := allowed(ctx, role, "lambda:InvokeFunction", arn)
				if err != nil {
					return nil, &messages.InvokeResponse_Error{Type: "Lambda.ServiceException", Message: err.Error()}
				}
				if !ok {
					return nil, &messages.InvokeResponse_Error{Type: "Lambda.AWSLambdaException", Message: fmt.Sprintf("User: %s is not authorized to perform: lambda:InvokeFunction on resource: %s because no identity-based policy allows the lambda:InvokeFunction action", role, arn)}
				}
				return invoke(ctx, arn, payload)
			})
		}
	}
	return nil
}

// lambdaInvoker runs a function synchronously; a function error is a
// *messages.InvokeResponse_Error, which the state machine's Retry and Catch
// match by its type.
type lambdaInvoker func(ctx context.Context, functionArn string, payload []byte) (json.RawMessage, error)
