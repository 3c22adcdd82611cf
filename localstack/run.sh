#!/usr/bin/env bash
# localstack/run.sh [all|up|deploy|quickstart|down]
#
# Runs Myriarch's AWS deployment on LocalStack, for people with Docker:
#   up          starts LocalStack (docker-compose.yml) and waits until it is healthy
#   deploy      deploys the same CDK app as `cdk deploy` (infra/, cdk.json) with
#               cdklocal, stage "local", no deletion protection
#   quickstart  runs the OpAMP gateway on this machine against LocalStack's
#               DynamoDB, a simulated fleet of agents, applies
#               examples/quickstart through the API Gateway of LocalStack
#               with myrctl, and lists the rollouts it started
#   down        stops LocalStack and removes its state
#   all         up, deploy, quickstart (the default)
#
# The gateway runs here rather than in LocalStack: ECS and load balancers are
# not in LocalStack's free edition. With a LocalStack account that has them,
# MYRIARCH_LOCALSTACK_GATEWAY=true deploys the Fargate service too.
#
# Tokens are generated into localstack/.state/ on the first deploy: the
# operator token (its sha256 goes into the stack's token table) and the
# agents' token (given to the local gateway and the simulated fleet).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
state="$here/.state"
stage=local
fail() { echo "localstack: $*" >&2; exit 1; }

export AWS_REGION=${AWS_REGION:-us-east-1}
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=$AWS_REGION
export AWS_ENVAR_ALLOWLIST=AWS_REGION,AWS_DEFAULT_REGION # cdklocal drops other AWS_* variables
export CDK_DISABLE_CLI_TELEMETRY=true JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=${JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION:-18,20}
endpoint=http://localhost:4566

# children: processes quickstart started; stopped when the script ends.
children=()
stop_children() {
	local pid
	for pid in "${children[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_children EXIT

compose() { docker compose -f "$here/docker-compose.yml" "$@"; }

up() {
	command -v docker >/dev/null || fail "docker is missing: LocalStack runs in Docker (see localstack/README.md; make test and make run need no Docker)"
	mkdir -p "$state"
	compose up -d --wait || fail "LocalStack did not become healthy: docker compose -f localstack/docker-compose.yml logs"
}

tokens() {
	mkdir -p "$state"
	[ -f "$state/operator-token" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/operator-token"
	[ -f "$state/agent-token" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/agent-token"
	local sum
	sum=$(printf '%s' "$(cat "$state/operator-token")" | sha256sum | cut -d' ' -f1)
	printf '[{"tokenSha256":"%s","actor":"user:00000000-0000-4000-8000-000000000001","displayName":"LocalStack operator","role":"admin"}]\n' \
		"$sum" >"$state/api-tokens.json"
}

deploy() {
	command -v npm >/dev/null || fail "npm is missing"
	[ -x "$here/node_modules/.bin/cdklocal" ] || (cd "$here" && npm ci --no-audit --no-fund) || fail "npm ci in localstack/ failed"
	tokens
	# Native binaries in a directory of their own: build/lambda stays arm64 for AWS.
	export LAMBDA_BUILD_DIR="$root/build/lambda-localstack" LAMBDA_GOARCH
	LAMBDA_GOARCH=$(go env GOARCH)
	local gateway=${MYRIARCH_LOCALSTACK_GATEWAY:-false}
	local cdklocal="$here/node_modules/.bin/cdklocal"
	cd "$root"
	"$cdklocal" bootstrap "aws://000000000000/$AWS_REGION" || fail "cdklocal bootstrap failed"
	"$cdklocal" deploy "Myriarch-$stage" --require-approval never --no-notices \
		-c stage="$stage" -c deletionProtection=false -c gateway="$gateway" \
		-c lambdaBuildDir="$LAMBDA_BUILD_DIR" -c apiTokensFile="$state/api-tokens.json" \
		--outputs-file "$state/outputs.json" || fail "cdklocal deploy failed"
	echo "localstack: deployed; outputs in $state/outputs.json" >&2
}

# output NAME: a stack output of the last deploy.
output() {
	node -e 'const o=require(process.argv[1]); const s=Object.values(o)[0]||{}; if(!s[process.argv[2]]) process.exit(1); console.log(s[process.argv[2]])' \
		"$state/outputs.json" "$1" || fail "no output $1 in $state/outputs.json: run localstack/run.sh deploy"
}

quickstart() {
	[ -f "$state/outputs.json" ] || fail "nothing deployed: run localstack/run.sh deploy"
	local api prefix
	api="http://$(output ApiId).execute-api.localhost.localstack.cloud:4566/$stage"
	prefix=$(output TablePrefix)
	cd "$root"
	go build -o "$state/bin/" ./opamp-gateway ./examples/simfleet ./cmd/myrctl

	AWS_ENDPOINT_URL_DYNAMODB=$endpoint MYRIARCH_TABLE_PREFIX=$prefix MYRIARCH_AGENT_TOKENS=$(cat "$state/agent-token") \
		MYRIARCH_GATEWAY_LISTEN=127.0.0.1:4320 MYRIARCH_GATEWAY_HEALTH_LISTEN=127.0.0.1:4321 \
		"$state/bin/opamp-gateway" >"$state/gateway.log" 2>&1 &
	children+=($!)
	for _ in $(seq 1 50); do curl -sf http://127.0.0.1:4321/healthz >/dev/null && break; sleep 0.2; done
	curl -sf http://127.0.0.1:4321/healthz >/dev/null || fail "the gateway did not start: $state/gateway.log"

	"$state/bin/simfleet" -n 20 -endpoint ws://127.0.0.1:4320/v1/opamp -token "$(cat "$state/agent-token")" >"$state/simfleet.log" 2>&1 &
	children+=($!)

	export MYRIARCH_API=$api MYRIARCH_TOKEN
	MYRIARCH_TOKEN=$(cat "$state/operator-token")
	echo "localstack: applying examples/quickstart through $api" >&2
	"$state/bin/myrctl" apply examples/quickstart || fail "myrctl apply failed"
	sleep 5 # the planner runs on the revision and then every minute
	"$state/bin/myrctl" rollouts list || fail "myrctl rollouts list failed"
	cat >&2 <<-EOF
		localstack: the quickstart ran. To go on by hand:
		  export MYRIARCH_API=$api MYRIARCH_TOKEN=\$(cat localstack/.state/operator-token)
		  go run ./cmd/myrctl rollouts list
		  go run ./cmd/myrctl watch <rollout id>
		(the gateway and the simulated fleet stop with this script: rerun 'localstack/run.sh quickstart')
	EOF
}

down() {
	compose down -v || true
	rm -rf "$state"
}

case ${1:-all} in
up) up ;;
deploy) deploy ;;
quickstart) quickstart ;;
down) down ;;
all) up && deploy && quickstart ;;
*) fail "usage: localstack/run.sh [all|up|deploy|quickstart|down]" ;;
esac
