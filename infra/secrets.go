package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// The secrets of executor objects (a webhook's signing secret, an AWX
// token) live in Secrets Manager as myriarch/<stage>/<name>: the operator
// creates them (docs/executors.md, "Secrets"); the stack only lets the
// functions that call executors read that prefix, and nothing else.

// executorSecretsPrefix is the name prefix of the stage's executor secrets.
func executorSecretsPrefix(c Config) string { return "myriarch/" + c.Stage + "/" }

// grantExecutorSecrets allows secretsmanager:GetSecretValue on the stage's
// prefix only. The trailing * covers the secret's name and the random
// suffix Secrets Manager appends to every secret's ARN; the "/" at the end
// of the prefix keeps myriarch/prod/ from matching myriarch/prod2/.
func grantExecutorSecrets(fn awsiam.IGrantable, c Config) {
	arn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":secretsmanager:"), awscdk.Aws_REGION(), jsii.String(":"),
		awscdk.Aws_ACCOUNT_ID(), jsii.String(":secret:" + executorSecretsPrefix(c) + "*"),
	})
	fn.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
		Resources: &[]*string{arn},
	}))
}
