#!/usr/bin/env bash
# with-lambda-rie.sh CMD [ARGS...]
#
# Runs CMD with MYRIARCH_LAMBDA_RIE set to the AWS Lambda Runtime Interface
# Emulator (aws-lambda-rie), the program the local cloud runs each Lambda
# function's bootstrap under. The emulator is built from its Go module,
# pinned below, into build/tools once; later runs reuse the binary. A build
# that fails is an error, never a skip. The exit status is CMD's.
#
# Environment: LAMBDA_RIE_VERSION overrides the pinned module version.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/build/tools"
# The module publishes no tags: this pseudo-version is the one the module
# proxy serves.
version=${LAMBDA_RIE_VERSION:-v0.0.0-20261030222936-bef5c4ba774d}
module=github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
rie="$tools/aws-lambda-rie"
stamp="$tools/aws-lambda-rie.version"

fail() { echo "with-lambda-rie: $*" >&2; exit 1; }

[ $# -gt 0 ] || fail "usage: scripts/with-lambda-rie.sh CMD [ARGS...]"

# The stamp names the version the binary was built from, so that changing
# the pin rebuilds it.
if [ ! -x "$rie" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
	command -v go >/dev/null || fail "go is missing: install Go to build the Lambda Runtime Interface Emulator"
	mkdir -p "$tools"
	# build/ holds only outputs: keep it out of git without touching .gitignore.
	[ -f "$root/build/.gitignore" ] || printf '*\n' >"$root/build/.gitignore"
	echo "with-lambda-rie: building aws-lambda-rie@$version into $tools" >&2
	# Outside the repository's module, so that its go.mod plays no part.
	(cd "$tools" && GOBIN="$tools" go install "$module@$version" >&2) ||
		fail "go install $module@$version failed: see above"
	printf '%s\n' "$version" >"$stamp"
fi

export MYRIARCH_LAMBDA_RIE="$rie"
exec "$@"
