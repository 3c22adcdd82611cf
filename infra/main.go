// Command infra is Myriarch's AWS CDK app: `cdk synth` and `cdk deploy`
// from the repository root run it (cdk.json). docs/deploy.md explains the
// configuration and the deployment.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	c, err := LoadConfig(contextOf(app), os.LookupEnv)
	if err == nil {
		_, err = newStack(app, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		jsii.Close()
		os.Exit(1)
	}
	app.Synth(nil)
}

// contextOf reads string values of the app's CDK context (cdk.json, -c).
func contextOf(app awscdk.App) func(string) (string, bool) {
	return func(key string) (string, bool) {
		v := app.Node().TryGetContext(jsii.String(key))
		if v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	}
}
