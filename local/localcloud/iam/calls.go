package iam

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Access is one (action, resource) pair AWS authorizes for a request;
// Resource is "*" for actions without resource-level permissions.
type Access struct {
	Action, Resource string
}

// Operation is a request as IAM sees it: the service's operation and the
// accesses it needs.
type Operation struct {
	Name     string // "DynamoDB_20120810.GetItem", "lambda Invoke", ...
	Accesses []Access
}

// Scope names resources the way the template's account does, and answers
// what a request alone cannot.
type Scope struct {
	Partition, Region, Account string
	// SecretArn resolves a SecretId (name or ARN) to the secret's ARN; nil
	// uses DefaultSecretArn with the template's secrets.
	SecretArn func(secretID string) string
	// TaskTokenStateMachine names the state machine whose execution handed
	// out a task token (local/sfnlocal knows); nil or false evaluates
	// SendTask* on "*".
	TaskTokenStateMachine func(token string) (string, bool)
}

func (s Scope) arn(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", s.Partition, service, s.Region, s.Account, resource)
}

// localArn rewrites DynamoDB Local's ARNs (region "ddblocal", account
// "000000000000") into the template's region and account, which the
// policies name.
func (s Scope) localArn(arn string) string {
	return strings.Replace(arn, ":ddblocal:000000000000:", ":"+s.Region+":"+s.Account+":", 1)
}

// Derive finds the operation of a signed request and the accesses AWS
// would authorize for it. service is the SigV4 signing name. An operation
// this package does not know is an error: it must be denied, never
// allowed unchecked.
func Derive(s Scope, service string, r *http.Request, body []byte) (Operation, error) {
	switch service {
	case "dynamodb":
		return jsonTarget(s, r, body, map[string]func(Scope, string, jsonBody) ([]Access, error){
			"DynamoDB_20120810":        dynamodbAccesses,
			"DynamoDBStreams_20120810": streamsAccesses,
		})
	case "states":
		return jsonTarget(s, r, body, map[string]func(Scope, string, jsonBody) ([]Access, error){"AWSStepFunctions": statesAccesses})
	case "events":
		return jsonTarget(s, r, body, map[string]func(Scope, string, jsonBody) ([]Access, error){"AWSEvents": eventsAccesses})
	case "secretsmanager":
		return jsonTarget(s, r, body, map[string]func(Scope, string, jsonBody) ([]Access, error){"secretsmanager": secretsAccesses})
	case "sqs":
		return jsonTarget(s, r, body, map[string]func(Scope, string, jsonBody) ([]Access, error){"AmazonSQS": sqsAccesses})
	case "lambda":
		return lambdaOperation(s, r)
	case "monitoring":
		return cloudwatchOperation(r, body)
	}
	return Operation{Name: service}, fmt.Errorf("the local cloud does not know the service %q", service)
}

// jsonBody is a JSON protocol request body.
type jsonBody map[string]any

func (b jsonBody) str(key string) string { return str(b[key]) }

// jsonTarget handles the JSON protocols: X-Amz-Target is
// "<service prefix>.<Operation>".
func jsonTarget(s Scope, r *http.Request, body []byte, prefixes map[string]func(Scope, string, jsonBody) ([]Access, error)) (Operation, error) {
	target := r.Header.Get("X-Amz-Target")
	prefix, op, ok := strings.Cut(target, ".")
	derive := prefixes[prefix]
	if !ok || derive == nil {
		return Operation{Name: target}, fmt.Errorf("unknown X-Amz-Target %q", target)
	}
	var b jsonBody
	if len(body) > 0 {
		if err := json.Unmarshal(body, &b); err != nil {
			return Operation{Name: target}, fmt.Errorf("%s: the body is not JSON: %w", target, err)
		}
	}
	accesses, err := derive(s, op, b)
	if err != nil {
		return Operation{Name: target}, fmt.Errorf("%s: %w", target, err)
	}
	return Operation{Name: target, Accesses: accesses}, nil
}
