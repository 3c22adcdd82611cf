#!/usr/bin/env bash
# cloud.sh demo|run|test: the synthesized stack run as AWS would, locally
# (`make cloud`, `make cloud-test`; docs/deploy.md, "The local cloud").
#
#  1. prepare: the operators' tokens and the loopback ports of the gate
#     servers, in build/cloud/settings.json;
#  2. synthesize stage "cloud" with them into .cdk.out-cloud, the Lambdas
#     built for this machine's CPU (build/lambda-cloud);
#  3. build the gateway binary;
#  4. demo: run `make demo`'s scenario on it; run: serve until Ctrl-C;
#     test: the local cloud's end-to-end tests (go test -tags localcloud).
#
# Run it under scripts/with-dynamodb-local.sh, scripts/with-lambda-rie.sh
# and scripts/with-gate-servers.sh (the Makefile does).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-demo}
cd "$root"
fail() { echo "cloud: $*" >&2; exit 1; }
export AWS_REGION=${AWS_REGION:-us-east-1} AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_CLI_TELEMETRY=true
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION=1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=${JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION:-18,20}

scripts/with-cdk.sh || fail "the AWS CDK CLI is not installed: see above"
[ -d node_modules/@cloud-copilot/iam-simulate ] || npm ci --no-audit --no-fund --no-update-notifier >&2 || fail "npm ci failed"

mkdir -p build/cloud
go build -o build/cloud/myriarch-cloud ./cmd/myriarch-cloud
go build -o build/cloud/opamp-gateway ./opamp-gateway
mapfile -t context < <(build/cloud/myriarch-cloud prepare -dir build/cloud)

rm -rf .cdk.out-cloud
start=$(date +%s)
# cdk.json's app, built into a file of its own: make test runs this beside
# scripts/synth.sh, whose cdk synth builds build/infra/app.
MYRIARCH_LAMBDA_BUILD_DIR="$root/build/lambda-cloud" LAMBDA_BUILD_DIR="$root/build/lambda-cloud" LAMBDA_GOARCH=$(go env GOARCH) \
	infra/node_modules/.bin/cdk synth --quiet --no-notices --app "go -C infra build -o ../build/cloud/cdk-app . && build/cloud/cdk-app" \
	--output .cdk.out-cloud "${context[@]}" >/dev/null || fail "cdk synth failed: see above"
echo "cloud: synthesized Myriarch-cloud in $(($(date +%s) - start)) s into .cdk.out-cloud" >&2

case "$mode" in
demo | run) exec build/cloud/myriarch-cloud "$mode" -dir build/cloud -assembly .cdk.out-cloud ;;
test) MYRIARCH_CLOUD_DIR="$root/build/cloud" MYRIARCH_CLOUD_ASSEMBLY="$root/.cdk.out-cloud" exec go test -count=1 -tags localcloud -timeout 20m ./local/localcloud/cloud/ ;;
*) fail "unknown mode $mode: demo, run or test" ;;
esac
