#!/usr/bin/env bash
# with-dynamodb-local.sh [CMD [ARGS...]]
#
# Runs CMD against a fresh, in-memory DynamoDB Local: AWS's own jar, shipped
# inside the npm package amplify-dynamodb-simulator (pinned in package.json),
# started with this machine's Java on a free loopback port. CMD sees
# AWS_ENDPOINT_URL_DYNAMODB and dummy credentials, so the code reaches the
# emulator through the same SDK calls and endpoint variable as in the cloud.
# The server is stopped when CMD ends, however it ends; the exit status is
# CMD's. SIGINT and SIGTERM are passed on to CMD, which stops first (make
# run's stack shuts down cleanly), then the server; the server ignores
# SIGINT, so that a Ctrl-C, which the terminal sends to every process of
# the group, does not take it away under the stopping command. Missing Java or a
# missing jar is an error, never a skip. Without CMD it only installs the
# jar when it is missing (make test does, before phases that each start
# one run side by side).
#
# Environment: DYNAMODB_LOCAL_JAVA_OPTS (default: a small heap, serial GC);
# DYNAMODB_LOCAL_REPORT_CPU=1: say at the end how much CPU the server used;
# MYRIARCH_DATA: keep the database on disk in $MYRIARCH_DATA/dynamodb
# instead of in memory (make run DATA=dir), exported to CMD as
# DYNAMODB_LOCAL_DB_PATH.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
jar_dir="$root/node_modules/amplify-dynamodb-simulator/emulator"

fail() { echo "with-dynamodb-local: $*" >&2; exit 1; }

# The jar comes with the npm dev dependencies; install them once.
if [ ! -f "$jar_dir/DynamoDBLocal.jar" ]; then
	command -v npm >/dev/null || fail "npm is missing: install Node.js and npm (Debian: apt-get install nodejs npm), then run 'npm ci' in $root"
	echo "with-dynamodb-local: installing DynamoDB Local (npm ci)" >&2
	(cd "$root" && npm ci --no-audit --no-fund --ignore-scripts >&2) || fail "npm ci failed: see above"
fi
[ -f "$jar_dir/DynamoDBLocal.jar" ] || fail "DynamoDBLocal.jar not found under $jar_dir: check the amplify-dynamodb-simulator version in package.json"
command -v java >/dev/null || fail "java is missing: install a Java runtime, 11 or newer (Debian: apt-get install default-jre-headless)"
[ $# -gt 0 ] || exit 0

workdir=$(mktemp -d "${TMPDIR:-/tmp}/dynamodb-local.XXXXXX")
pid=""
signalled=""
stop() {
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
		echo "with-dynamodb-local: DynamoDB Local ended before the command; its log:" >&2
		tail -n 20 "$workdir/server.log" >&2 2>/dev/null || true
	fi
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		# The emulator's own CPU time (user + system, in clock ticks after
		# the command and state fields): what make test's phases spend in it.
		local ticks=""
		[ -z "${DYNAMODB_LOCAL_REPORT_CPU:-}" ] ||
			ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null || true)
		[ -z "$ticks" ] || echo "with-dynamodb-local: DynamoDB Local used $((ticks / $(getconf CLK_TCK))) s of CPU" >&2
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		# After a Ctrl-C or SIGTERM, the last of the stopping stack's lines,
		# in its format (cmd/myriarch-local).
		[ -z "$signalled" ] || echo "  DynamoDB Local    stopped"
	fi
	rm -rf "$workdir"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# In memory, or on disk, always in one shared database (the same whatever
# the credentials and region: the local cloud gives each role credentials
# of its own), and on disk so that a restarted stack finds its tables.
storage=(-inMemory -sharedDb)
if [ -n "${MYRIARCH_DATA:-}" ]; then
	mkdir -p "$MYRIARCH_DATA/dynamodb"
	db_path=$(cd "$MYRIARCH_DATA/dynamodb" && pwd)
	storage=(-sharedDb -dbPath "$db_path")
	export DYNAMODB_LOCAL_DB_PATH="$db_path"
fi

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start PORT: launch the jar and wait until it accepts connections; fails
# when the process dies first (for example, the port was taken meanwhile).
start() {
	local port=$1
	# SIGINT ignored (the JVM keeps an ignored SIGINT ignored): Ctrl-C in
	# the terminal reaches every process of make's group, and the store must
	# outlive the command, which still writes to it as it stops; stop()
	# ends the server once the command has.
	# shellcheck disable=SC2086 # the options are words
	(trap '' INT && cd "$workdir" && exec java ${DYNAMODB_LOCAL_JAVA_OPTS:--Xms32m -Xmx768m -XX:+UseSerialGC -XX:TieredStopAtLevel=1} \
		-Djava.library.path="$jar_dir/DynamoDBLocal_lib" -jar "$jar_dir/DynamoDBLocal.jar" \
		"${storage[@]}" -disableTelemetry -port "$port") >"$workdir/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || { pid=""; return 1; }
		if answers "$port"; then
			# still there a moment later: a connect can succeed on a port
			# the server then fails to keep
			sleep 0.3
			kill -0 "$pid" 2>/dev/null && answers "$port" && return 0
		fi
		sleep 0.1
	done
	return 1
}

started=""
for _ in 1 2 3 4 5; do
	# below Linux's ephemeral range (32768-60999), so that no outgoing
	# connection of the tests takes the port between the check and the bind
	port=$((20000 + RANDOM % 12000))
	port_free "$port" || continue
	if start "$port"; then
		started=$port
		break
	fi
done
if [ -z "$started" ]; then
	cat "$workdir/server.log" >&2 2>/dev/null || true
	fail "DynamoDB Local did not start (log above)"
fi

export AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$started"
# DynamoDB Local serves the streams API on the same port.
export AWS_ENDPOINT_URL_DYNAMODB_STREAMS="$AWS_ENDPOINT_URL_DYNAMODB"
export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN
echo "with-dynamodb-local: DynamoDB Local on $AWS_ENDPOINT_URL_DYNAMODB" >&2

# CMD runs in the background so that this shell can pass a signal on and
# still stop the server afterwards (a foreground CMD would delay the traps
# until it ended by itself). A Go program re-enables the SIGINT that a
# background job starts with ignored once it asks for it (signal.Notify).
"$@" &
child=$!
forward() {
	signalled=$1
	kill "-$1" "$child" 2>/dev/null || true
}
trap 'forward INT' INT
trap 'forward TERM' TERM
status=0
wait "$child" || status=$?
# A trapped signal ends wait early: wait for CMD itself to stop.
while kill -0 "$child" 2>/dev/null; do
	status=0
	wait "$child" || status=$?
done
exit "$status"
