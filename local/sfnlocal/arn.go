package sfnlocal

import (
	"strings"
	"unicode"
)

// stateMachineARN returns arn:aws:states:REGION:ACCOUNT:stateMachine:NAME.
func (s *Server) stateMachineARN(name string) string {
	return "arn:aws:states:" + s.region + ":" + s.account + ":stateMachine:" + name
}

// executionARN returns arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME.
func (s *Server) executionARN(machine, name string) string {
	return "arn:aws:states:" + s.region + ":" + s.account + ":execution:" + machine + ":" + name
}

// lambdaARN returns the function ARN for a function name or ARN.
func (s *Server) lambdaARN(nameOrARN string) string {
	if strings.HasPrefix(nameOrARN, "arn:") {
		return nameOrARN
	}
	name, qualifier := functionName(nameOrARN)
	arn := "arn:aws:lambda:" + s.region + ":" + s.account + ":function:" + name
	if qualifier != "" {
		arn += ":" + qualifier
	}
	return arn
}

// checkARN checks that arn is a Step Functions ARN of the given resource type (for
// example "stateMachine") and returns its resource part after the type.
func checkARN(arn, resourceType string) (string, *APIError) {
	if !strings.HasPrefix(arn, "arn:") {
		return "", apiErr(errInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", arn)
	}
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[2] != "states" {
		return "", apiErr(errInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	if parts[5] != resourceType {
		return "", apiErr(errInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", parts[5])
	}
	return parts[6], nil
}

// validName checks a state machine or execution name: 1 to 80 characters without
// whitespace, brackets, wildcards, special characters or control characters.
func validName(name string) bool {
	if name == "" || len([]rune(name)) > 80 {
		return false
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || (r >= 0x7f && r <= 0x9f) || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}
