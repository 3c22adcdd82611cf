package main

import "strings"

// apiWildcard widens a method ARN
// (arn:aws:execute-api:region:account:api-id/stage/METHOD/path) to every
// method and path of the same API and stage, because API Gateway caches the
// policy per token and reuses it for the caller's next requests.
func apiWildcard(methodArn string) string {
	parts := strings.SplitN(methodArn, "/", 3)
	if len(parts) < 2 {
		return methodArn
	}
	return parts[0] + "/" + parts[1] + "/*"
}
