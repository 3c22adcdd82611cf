#!/usr/bin/env bash
# with-chromium.sh [CMD [ARGS...]]
#
# Makes sure the browser that the web page's tests drive is installed:
# Debian's chromium (adapters/ui/uitest starts one per test, headless, and stops
# it), with fonts-liberation, the one recommended package it needs headless
# (without fonts a screenshot shows no text). As root with apt-get, a missing package is installed; otherwise it is
# an error that names it, never a skip. Then runs CMD with MYRIARCH_CHROMIUM
# naming the binary; its exit status is the script's.
set -euo pipefail

fail() { echo "with-chromium: $*" >&2; exit 1; }

find_chromium() { command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true; }

bin=${MYRIARCH_CHROMIUM:-$(find_chromium)}
if [ -z "$bin" ]; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		fail "missing chromium: install with 'apt-get install chromium'"
	fi
	echo "with-chromium: installing chromium" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
	bin=$(find_chromium)
	[ -n "$bin" ] || fail "chromium still missing after apt-get install"
fi
[ -x "$bin" ] || fail "$bin is not an executable"
export MYRIARCH_CHROMIUM="$bin"

[ $# -gt 0 ] || exit 0
exec "$@"
