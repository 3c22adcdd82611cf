#!/usr/bin/env bash
# with-supervisor.sh CMD [ARGS...]
#
# Runs CMD with MYRIARCH_SUPERVISOR_BIN set to the OpenTelemetry Collector's
# OpAMP supervisor and MYRIARCH_OTELCOL_BIN to a collector built with the
# Collector Builder from examples/supervisor/builder.yaml, both at the
# release pinned below, built into build/tools from the Go module proxy
# once (about 5 minutes and 1.4 GB of module and build caches cold); later
# runs reuse them. MYRIARCH_OTELCOL_NEXT_BIN is the same collector built
# as the next version (dist.version 0.150.0, the same components), so that
# the updater's end-to-end test has two real versions to move between, and
# MYRIARCH_UPDATER_BIN is cmd/myriarch-updater of this checkout, built
# every run. A build that fails is an error, never a skip. The exit status
# is CMD's.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/build/tools"
# The supervisor's only release the module proxy serves, and the collector
# release of its components.
version=v0.149.0
supmod=github.com/open-telemetry/opentelemetry-collector-contrib/cmd/opampsupervisor
sup="$tools/opampsupervisor"
col="$tools/otelcol-myriarch/otelcol-myriarch"

fail() { echo "with-supervisor: $*" >&2; exit 1; }

[ $# -gt 0 ] || fail "usage: scripts/with-supervisor.sh CMD [ARGS...]"
command -v go >/dev/null || fail "go is missing: install Go to build the supervisor and the collector"
mkdir -p "$tools"
[ -f "$root/build/.gitignore" ] || printf '*\n' >"$root/build/.gitignore"

if [ ! -x "$sup" ] || [ "$(cat "$sup.version" 2>/dev/null)" != "$version" ]; then
	echo "with-supervisor: building opampsupervisor@$version into $tools" >&2
	# go install refuses the module: its go.mod replaces test-only modules
	# with paths of the contrib repository. Build it from its source with
	# those lines removed; nothing the binary imports is replaced.
	dir=$(cd "$tools" && go mod download -json "$supmod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$dir" ] || fail "go mod download $supmod@$version failed"
	src="$tools/opampsupervisor-src"
	rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src"
	sed -i '/^replace /d' "$src/go.mod"
	(cd "$src" && go build -o "$sup" . >&2) || fail "building the supervisor failed: see above"
	rm -rf "$src"
	printf '%s\n' "$version" >"$sup.version"
fi

# build_collector NAME MANIFEST: the Collector Builder's collector of
# MANIFEST into $tools/NAME, unless the one there was built from it.
build_collector() {
	local name=$1 manifest=$2 sum
	sum=$(sha256sum "$manifest" | cut -d' ' -f1)
	if [ -x "$tools/$name/otelcol-myriarch" ] && [ "$(cat "$tools/$name.sum" 2>/dev/null)" = "$sum" ]; then
		return
	fi
	echo "with-supervisor: building a collector from $manifest into $tools/$name" >&2
	# The manifest's output_path is relative (./build/otelcol-myriarch): run
	# the builder from build/tools' parent's view of it.
	(cd "$tools" && rm -rf build && mkdir -p build && go run "go.opentelemetry.io/collector/cmd/builder@$version" --config "$manifest" >&2) ||
		fail "the Collector Builder failed: see above"
	rm -rf "${tools:?}/$name" && mv "$tools/build/otelcol-myriarch" "$tools/$name" && rmdir "$tools/build"
	printf '%s\n' "$sum" >"$tools/$name.sum"
}

manifest="$root/examples/supervisor/builder.yaml"
build_collector otelcol-myriarch "$manifest"
# The next version: the same manifest with dist.version 0.150.0, so that
# the collector reports service.version 0.150.0 (the components stay at
# v0.149.0; their build cache makes this build a link of the main package).
next="$tools/builder-next.yaml"
sed 's/^  version: 0\.149\.0$/  version: 0.150.0/' "$manifest" >"$next"
grep -q '^  version: 0.150.0$' "$next" || fail "builder.yaml has no dist.version 0.149.0 line to turn into 0.150.0"
build_collector otelcol-myriarch-next "$next"

updater="$tools/myriarch-updater"
(cd "$root" && go build -ldflags "-X main.version=e2e" -o "$updater" ./cmd/myriarch-updater) ||
	fail "building cmd/myriarch-updater failed: see above"

export MYRIARCH_SUPERVISOR_BIN="$sup" MYRIARCH_OTELCOL_BIN="$col" \
	MYRIARCH_OTELCOL_NEXT_BIN="$tools/otelcol-myriarch-next/otelcol-myriarch" MYRIARCH_UPDATER_BIN="$updater"
exec "$@"
