#!/usr/bin/env bash
# with-cdk.sh [CMD [ARGS...]]
#
# Makes sure the AWS CDK CLI that infra/package.json pins is installed in
# infra/node_modules (npm ci there when it is missing or another version),
# then runs CMD; its exit status is the script's. scripts/synth.sh and
# scripts/cloud.sh call it first; make test calls it once before they run
# side by side, so that no two npm ci write infra/node_modules at once.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "with-cdk: $*" >&2; exit 1; }

command -v npm >/dev/null || fail "npm is missing: install Node.js 20 or newer and npm (Debian: apt-get install nodejs npm)"

pinned=$(cd "$root/infra" && node -p 'require("./package.json").devDependencies["aws-cdk"]')
installed=""
if [ -f "$root/infra/node_modules/aws-cdk/package.json" ]; then
	installed=$(cd "$root/infra" && node -p 'require("./node_modules/aws-cdk/package.json").version')
fi
if [ "$installed" != "$pinned" ]; then
	echo "with-cdk: installing the AWS CDK CLI $pinned (npm ci in infra/)" >&2
	(cd "$root/infra" && npm ci --no-audit --no-fund --no-update-notifier >&2) || fail "npm ci in infra/ failed: see above"
fi

[ $# -gt 0 ] || exit 0
exec "$@"
