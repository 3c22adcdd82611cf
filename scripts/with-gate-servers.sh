#!/usr/bin/env bash
# with-gate-servers.sh [CMD [ARGS...]]
#
# Makes sure the servers that the gate's integration tests run are installed:
# Debian's prometheus and prometheus-alertmanager (pkg/gate/gatetest starts
# one of each per test, on a free loopback port, and stops it). As root with
# apt-get, a missing package is installed; otherwise a missing one is an
# error that names it, never a skip. Then runs CMD, whose exit status is the
# script's; nothing is started here.
set -euo pipefail

fail() { echo "with-gate-servers: $*" >&2; exit 1; }

missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		fail "missing ${missing[*]}: install with 'apt-get install ${missing[*]}'"
	fi
	echo "with-gate-servers: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	for bin in prometheus prometheus-alertmanager; do
		command -v "$bin" >/dev/null 2>&1 || fail "$bin still missing after apt-get install"
	done
fi

[ $# -gt 0 ] || exit 0
exec "$@"
