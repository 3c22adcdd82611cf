// Command myriarch-cloud runs the synthesized stack as AWS would, on this
// machine (package local/localcloud/cloud): `make cloud` prepares its
// settings, synthesizes the stack with them and runs the demo on it.
//
//	myriarch-cloud prepare -dir build/cloud   # tokens and loopback ports; prints the synthesis's -c flags
//	myriarch-cloud demo -dir build/cloud -assembly .cdk.out-cloud
//	myriarch-cloud run  -dir build/cloud -assembly .cdk.out-cloud
//
// It needs DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB,
// scripts/with-dynamodb-local.sh), the Lambda Runtime Interface Emulator
// (MYRIARCH_LAMBDA_RIE, scripts/with-lambda-rie.sh), Prometheus for the
// demo's gate (scripts/with-gate-servers.sh) and the repository's
// node_modules (the IAM evaluator).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: myriarch-cloud prepare|run|demo [flags]")
		return 2
	}
	var err error
	switch args[0] {
	case "prepare":
		err = prepareCmd(args[1:], stdout)
	case "run", "demo":
		err = serveCmd(ctx, args[0], args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("unknown command %q: prepare, run or demo", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "myriarch-cloud:", err)
		return 1
	}
	return 0
}
