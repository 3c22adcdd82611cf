#!/usr/bin/env bash
# synth.sh: checks the AWS deployment without an AWS account or Docker
# (`make synth`, part of `make test`).
#
#  1. installs the pinned AWS CDK CLI (infra/package.json) if it is missing
#     or another version (scripts/with-cdk.sh);
#  2. runs `cdk synth --quiet` from the repository root: cdk.json builds the
#     Lambdas first (scripts/build-lambdas.sh), then runs the Go app in
#     infra/; the cloud assembly lands in .cdk.out/ (hidden, so that the
#     Go tools never read the Go sources CDK stages there as assets);
#  3. vets and tests the infra module (assertion tests on the synthesized
#     stack: resources, least-privilege policies, the state machine file).
#
# No credentials are needed: the stack is environment-agnostic and a dummy
# region is set; the gateway's image is only staged (built by `cdk deploy`).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "synth: $*" >&2; exit 1; }

# Quiet and offline where possible: no credential lookups on EC2 metadata,
# no telemetry, no notices; jsii's banner about Node.js 20 says nothing we act on.
export AWS_REGION=${AWS_REGION:-us-east-1} AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}
export AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_CLI_TELEMETRY=true
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION=1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=${JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION:-18,20}

command -v go >/dev/null || fail "go is missing"
"$root/scripts/with-cdk.sh" || fail "the AWS CDK CLI is not installed: see above"

cd "$root"
rm -rf .cdk.out # CDK never prunes it: old assets would pile up
start=$(date +%s)
infra/node_modules/.bin/cdk synth --quiet --no-notices || fail "cdk synth failed: see above"
echo "synth: cdk synth took $(($(date +%s) - start)) s; cloud assembly in .cdk.out/" >&2

# "." and not "./...": infra/node_modules holds the CLI's Go init templates.
cd "$root/infra"
go vet . || fail "go vet in infra/ failed"
go test -count=1 . || fail "infra tests failed"
