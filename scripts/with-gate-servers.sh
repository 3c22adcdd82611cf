#!/usr/bin/env bash
# with-gate-servers.sh [--unless-url-set] [CMD [ARGS...]]
#
# Makes sure the servers that the gate's integration tests run are installed:
# Debian's prometheus and prometheus-alertmanager (local/gate/gatetest starts
# one of each per test, on a free loopback port, and stops it). As root with
# apt-get, a missing package is installed; otherwise a missing one is an
# error that names it, never a skip. Then runs CMD, whose exit status is the
# script's; nothing is started here.
#
# --unless-url-set (make run): a server that MYRIARCH_PROMETHEUS_URL or
# MYRIARCH_ALERTMANAGER_URL names is the user's, and the local stack starts
# none of that kind, so its package is not needed.
set -euo pipefail

fail() { echo "with-gate-servers: $*" >&2; exit 1; }

unless_url_set=
if [ "${1:-}" = --unless-url-set ]; then
	unless_url_set=1
	shift
fi
missing=()
need() { # need BINARY VARIABLE: BINARY is missing unless installed, or VARIABLE names the user's server
	if [ -n "$unless_url_set" ] && [ -n "${!2:-}" ]; then
		return
	fi
	command -v "$1" >/dev/null 2>&1 || missing+=("$1")
}
need prometheus MYRIARCH_PROMETHEUS_URL
need prometheus-alertmanager MYRIARCH_ALERTMANAGER_URL

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		fail "missing ${missing[*]}: install with 'apt-get install ${missing[*]}'"
	fi
	echo "with-gate-servers: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	for bin in "${missing[@]}"; do
		command -v "$bin" >/dev/null 2>&1 || fail "$bin still missing after apt-get install"
	done
fi

[ $# -gt 0 ] || exit 0
exec "$@"
