#!/usr/bin/env bash
# with-aws-cli.sh [CMD [ARGS...]]
#
# Makes sure the AWS CLI is installed: the README's walk-through lists the
# local Step Functions endpoint's executions with it, and its test
# (cmd/myriarch-local) runs that command as printed. As root with apt-get,
# a missing CLI is installed (Debian's awscli); otherwise it is an error
# that names it, never a skip. Then runs CMD; its exit status is the
# script's.
set -euo pipefail

fail() { echo "with-aws-cli: $*" >&2; exit 1; }

if ! command -v aws >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		fail "missing the AWS CLI: install with 'apt-get install awscli'"
	fi
	echo "with-aws-cli: installing awscli" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends awscli >/dev/null
	command -v aws >/dev/null 2>&1 || fail "aws still missing after apt-get install"
fi

[ $# -gt 0 ] || exit 0
exec "$@"
