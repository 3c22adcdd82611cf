#!/usr/bin/env bash
# build-lambdas.sh
#
# Cross-compiles every main package functions/<name>/ into
# build/lambda/<name>/bootstrap: Lambda's provided.al2023 runtime on arm64
# (GOOS=linux GOARCH=arm64 CGO_ENABLED=0, -tags lambda.norpc). It zips
# nothing: the CDK app (infra/) points Code.fromAsset at each directory and
# CDK zips it. cdk.json runs this before every `cdk synth` and `cdk deploy`.
# A directory under functions/ that is not a main package is an error.
#
# Environment: LAMBDA_BUILD_DIR (default: build/lambda in the repository);
# LAMBDA_GOARCH (default arm64, what the stack declares; LocalStack on an
# x86 host runs amd64 binaries with LAMBDA_IGNORE_ARCHITECTURE).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${LAMBDA_BUILD_DIR:-$root/build/lambda}

fail() { echo "build-lambdas: $*" >&2; exit 1; }

cd "$root"
names=()
for dir in functions/*/; do
	[ -d "$dir" ] || continue
	names+=("$(basename "$dir")")
done
[ ${#names[@]} -gt 0 ] || { echo "build-lambdas: no functions/*/ to build" >&2; }

mkdir -p "$out"
# build/ holds only outputs: keep it out of git without touching .gitignore.
if [ -z "${LAMBDA_BUILD_DIR:-}" ] && [ ! -f "$root/build/.gitignore" ]; then
	printf '*\n' >"$root/build/.gitignore"
fi

# Outputs of functions that no longer exist would deploy stale code.
for dir in "$out"/*/; do
	[ -d "$dir" ] || continue
	name=$(basename "$dir")
	[ -d "functions/$name" ] || rm -rf "$dir"
done
[ ${#names[@]} -gt 0 ] || exit 0

pkgs=()
for name in "${names[@]}"; do
	kind=$(go list -f '{{.Name}}' "./functions/$name") || fail "functions/$name: go list failed (see above)"
	[ "$kind" = main ] || fail "functions/$name is package $kind, not a main package"
	pkgs+=("./functions/$name")
done

# One go build for all: the compiler shares the work across packages.
# Reproducible binaries (no VCS stamp, no build id) keep CDK's asset hash,
# and so the deployed function, unchanged when the code did not change.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-lambdas.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOOS=linux GOARCH=${LAMBDA_GOARCH:-arm64} CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$tmp/" "${pkgs[@]}"
for name in "${names[@]}"; do
	mkdir -p "$out/$name"
	mv "$tmp/$name" "$out/$name/bootstrap"
done
echo "build-lambdas: built ${names[*]} into $out" >&2
