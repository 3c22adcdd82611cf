#!/usr/bin/env bash
# test.sh: what `make test` runs (and CI, through .ci/run): every check and
# test of the repository, in phases, with the time each took.
#
#   check            gofmt, go vet, go mod tidy, asl-validator (make check)
#   setup            what the tests run, installed or built when missing:
#                    DynamoDB Local, Prometheus, Alertmanager, Chromium, the
#                    AWS CLI, the AWS CDK CLI, the Lambda Runtime Interface
#                    Emulator, the OpAMP supervisor and its collectors
#   go-test          the tests of every package but local/stack, the
#                    longest first
#   stack-test       local/stack's end-to-end tests, 4 at a time, the TIMED
#                    ones skipped
#   supervisor-test  the OpAMP supervisor and the updater on the local stack
#   cloud-test       the local cloud's end-to-end tests (scripts/cloud.sh test)
#   synth            cdk synth and the infra module's tests (scripts/synth.sh)
#   timed            the TIMED tests, alone, after the others
#
# go-test, stack-test, supervisor-test, cloud-test and synth run side by
# side: most of their time is spent waiting (on rollouts' health waits and
# bakes, on Lambda invocations, on DynamoDB Local), not computing; synth,
# which only computes, at a lower priority. Each phase that needs DynamoDB
# Local starts its own: the emulator does its work on one thread, and
# phases side by side on one would queue behind each other's requests (a
# planner call of cloud-test outlasted its 10 s behind them). The output of
# a phase that runs beside others is printed when it ends; every phase's is
# kept in build/test/<phase>.log. After every phase comes a line
# `make test: phase <name> took <s> s`, at the end a table of them all. A
# failed phase fails make test but does not stop the others; a failed
# check does (what follows would only bury its message).
#
# Environment: GO_TEST_P, how many packages go-test runs at once (go test
# -p; default 4); STACK_TEST_PARALLEL, how many tests stack-test runs at
# once (go test -parallel; default 4: at 8, beside the other phases on two
# cores, API calls of the stacks outlasted their timeouts); GO_TEST_FLAGS,
# more flags for every go test (-v, -race).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs=$root/build/test

# TIMED are the tests whose figures depend on a quiet machine; they run
# alone, after the others. The prediction test compares a prediction with
# the stack's own timing: beside the others on two cores the rollout ran 2
# to 4 s behind for load no operator's engine shares. The counted wave
# asserts reads and requests per target: starved of CPU, the gateway's
# quick polls of the lagging index meet each pushed agent more often before
# its report is written (9.8 entries a target against 2.0 to 2.4 under
# lighter load), and its 100 agents took minutes to settle.
TIMED='TestPrediction_AgainstTheStack|TestWave_ReadsPerTarget'

# ddb runs a command against a DynamoDB Local of its own, which says at
# the end how much CPU it used: in most phases, more than the tests.
ddb=scripts/with-dynamodb-local.sh
export DYNAMODB_LOCAL_REPORT_CPU=1

# The packages that take longest, given to go test first: it starts them in
# the order it is given, and one of these started last would be the last
# to end. The walk-through of cmd/myriarch-local mostly waits; core/engine's
# model tests keep a CPU busy meanwhile.
FIRST=(cmd/myriarch-local core/engine adapters/store adapters/ui adapters/gateway api/schema)

# phase [-tee] NAME CMD...: runs CMD as a phase, its output into
# build/test/NAME.log and, with -tee, to the terminal as it comes (without,
# after the phase ends); then prints and records in build/test/phases its
# wall time and the CPU time of the processes it waited for.
phase() {
	local tee=""
	if [ "$1" = -tee ]; then
		tee=1
		shift
	fi
	local name=$1 start status=0
	shift
	start=$(date +%s)
	if [ -n "$tee" ]; then
		(
			"$@" 2>&1 | tee "$logs/$name.log"
			s=${PIPESTATUS[0]}
			times >"$logs/$name.times"
			exit "$s"
		) || status=$?
	else
		echo "make test: phase $name started (its output when it ends; build/test/$name.log)"
		(
			"$@" >"$logs/$name.log" 2>&1
			s=$?
			times >"$logs/$name.times"
			exit "$s"
		) || status=$?
	fi
	local took=$(($(date +%s) - start)) cpu
	# times: the shell's own user and system time, then its children's
	cpu=$(tail -n 1 "$logs/$name.times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } printf "%d", s + 0.5 }')
	# One phase prints at a time: two that end together would mix lines.
	(
		flock 9
		if [ -z "$tee" ]; then
			echo "make test: ==== phase $name ===="
			cat "$logs/$name.log"
		fi
		if [ "$status" = 0 ]; then
			echo "make test: phase $name took $took s (CPU $cpu s)"
			echo "$name ok $took $cpu" >>"$logs/phases"
		else
			echo "make test: phase $name FAILED (exit status $status) after $took s (CPU $cpu s)"
			echo "$name FAILED $took $cpu" >>"$logs/phases"
		fi
	) 9>>"$logs/print.lock"
	return "$status"
}

# summary prints the table of the phases and names the failed ones; its
# status is make test's.
summary() {
	local total=$(($(date +%s) - $1)) failed
	echo
	echo "make test: phases (wall time; CPU time of the processes each waited for)"
	printf '  %-16s %-7s %6s %6s\n' phase status wall CPU
	while read -r name status took cpu; do
		printf '  %-16s %-7s %4s s %4s s\n' "$name" "$status" "$took" "$cpu"
	done <"$logs/phases"
	printf '  %-16s %-7s %4s s   (from the start; the phases overlap)\n' total "" "$total"
	failed=$(awk '$2 != "ok" { printf "%s%s", sep, $1; sep = ", " }' "$logs/phases")
	if [ -n "$failed" ]; then
		echo "make test: FAILED after $total s: $failed"
		return 1
	fi
	echo "make test: passed in $total s"
}

# packages lists the module's packages for go-test: FIRST first, then the
# others but local/stack.
packages() {
	local p f
	for p in "${FIRST[@]}"; do
		echo "./$p"
	done
	go list -e ./... | grep -v /node_modules/ | while read -r p; do
		for f in "${FIRST[@]}" local/stack; do
			[ "$p" = "github.com/myriarch/myriarch/$f" ] && continue 2
		done
		echo "$p"
	done
}

# phases runs the phases after setup, under the scripts that set it up.
phases() {
	local setup_start=$1 status=0 pids=() pkgs j
	echo "make test: phase setup took $(($(date +%s) - setup_start)) s"
	echo "setup ok $(($(date +%s) - setup_start)) -" >>"$logs/phases"
	mapfile -t pkgs < <(packages)

	# Each phase that runs beside others gets a process group of its own
	# (set -m), so that a signal stops all of it and no more.
	stop() {
		for j in "${pids[@]}"; do
			kill -INT -- "-$j" 2>/dev/null
		done
		wait
		exit 130
	}
	trap stop INT TERM
	set -m
	# shellcheck disable=SC2086 # GO_TEST_FLAGS are words
	phase go-test "$ddb" go test -count=1 -p "${GO_TEST_P:-4}" ${GO_TEST_FLAGS:-} "${pkgs[@]}" &
	pids+=($!)
	# shellcheck disable=SC2086
	phase stack-test "$ddb" go test -count=1 -parallel "${STACK_TEST_PARALLEL:-4}" ${GO_TEST_FLAGS:-} -skip "^($TIMED)\$" ./local/stack/ &
	pids+=($!)
	# shellcheck disable=SC2086
	phase supervisor-test "$ddb" go test -count=1 -timeout 20m -tags supervisor ${GO_TEST_FLAGS:-} \
		-run 'TestSupervisor_(ExampleConfiguration|Updater)$' ./local/stack/ &
	pids+=($!)
	phase cloud-test "$ddb" scripts/cloud.sh test &
	pids+=($!)
	# synth only computes, against no clock: at a lower priority it takes
	# the CPU that the phases beside it, which wait on clocks, leave.
	phase synth nice -n 5 scripts/synth.sh &
	pids+=($!)
	set +m
	for j in "${pids[@]}"; do
		wait "$j" || status=1
	done

	# shellcheck disable=SC2086
	phase -tee timed "$ddb" go test -count=1 ${GO_TEST_FLAGS:-} -run "^($TIMED)\$" ./local/stack/ || status=1
	return "$status"
}

if [ "${1:-}" = --phases ]; then
	phases "$2"
	exit
fi

start=$(date +%s)
rm -rf "$logs"
mkdir -p "$logs"
# build/ holds only outputs: keep it out of git without touching .gitignore.
[ -f "$root/build/.gitignore" ] || printf '*\n' >"$root/build/.gitignore"
: >"$logs/phases"

# The checks are independent of each other: gofmt, go vet, go mod tidy and
# asl-validator (with its npm ci) side by side.
if ! phase -tee check "${MAKE:-make}" --no-print-directory -j4 --output-sync=target check; then
	summary "$start"
	exit 1
fi

# setup: each script installs or builds what is missing, then runs the
# next; the last runs the phases. A signal goes to them as TERM, which
# stops each phase's process group.
setup_start=$(date +%s)
(
	scripts/with-dynamodb-local.sh &&
		exec scripts/with-gate-servers.sh scripts/with-chromium.sh scripts/with-aws-cli.sh scripts/with-cdk.sh \
			scripts/with-lambda-rie.sh scripts/with-supervisor.sh "$0" --phases "$setup_start"
) &
chain=$!
trap 'kill -TERM "$chain" 2>/dev/null' INT TERM
while kill -0 "$chain" 2>/dev/null; do
	wait "$chain"
done
trap - INT TERM
grep -q '^setup ' "$logs/phases" || echo "setup FAILED $(($(date +%s) - setup_start)) -" >>"$logs/phases"
summary "$start"
