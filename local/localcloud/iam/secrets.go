package iam

import (
	"fmt"
	"strings"
)

// secretsAccesses: the secret operations are authorized on the secret's
// full ARN (with the six characters Secrets Manager appends to the name).
func secretsAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	switch op {
	case "GetSecretValue", "DescribeSecret", "PutSecretValue", "UpdateSecret":
	default:
		return nil, fmt.Errorf("the local cloud does not know the Secrets Manager operation %s", op)
	}
	id := b.str("SecretId")
	if id == "" {
		return nil, fmt.Errorf("no SecretId")
	}
	resolve := s.SecretArn
	if resolve == nil {
		resolve = func(id string) string { return DefaultSecretArn(s, nil, id) }
	}
	return []Access{{"secretsmanager:" + op, resolve(id)}}, nil
}

// DefaultSecretArn resolves a SecretId: an ARN stays as it is; a name
// known to the template (known: name → ARN) takes that ARN; another name
// gets a placeholder suffix "-XXXXXX", which grants written as
// "…:secret:<name or prefix>*" match, as they match the real suffix.
func DefaultSecretArn(s Scope, known map[string]string, id string) string {
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	if arn, ok := known[id]; ok {
		return arn
	}
	return s.arn("secretsmanager", "secret:"+id+"-XXXXXX")
}
