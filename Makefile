# Myriarch: one entry point for building and testing.
# `make test` is what CI runs (.ci/run) and what the README names.
GO ?= go
# Every package of the root module; node_modules may hold Go templates (the
# CDK CLI's) that are no packages of ours.
PKGS := $(shell $(GO) list -e ./... 2>/dev/null | grep -v /node_modules/)

.PHONY: cloud cloud-run cloud-test supervisor-test test check fmt vet tidy asl unit integration synth bench fuzz storeload gatewayload demo run bench-assign bench-wave bench-evaluate ddbwrites screenshot
FUZZTIME ?= 200000x

# With DynamoDB Local: AWS's jar from the npm package amplify-dynamodb-simulator
# (package.json), run with this machine's Java on a free port, in memory, and
# stopped afterwards. Needs Node.js/npm (first run: npm ci) and a Java runtime.
WITH_DYNAMODB := scripts/with-dynamodb-local.sh
# The benchmarks run it with the JVM's full JIT: the script's default stops at
# the quick-starting C1 compiler, which suits the tests' short runs, while a
# benchmark's emulator runs for minutes and answers the same requests 2 to 3
# times faster once C2 has compiled it (docs/scale.md, "How they are measured").
BENCH_DYNAMODB := DYNAMODB_LOCAL_JAVA_OPTS="$${BENCH_DYNAMODB_JAVA_OPTS:--Xms256m -Xmx768m -XX:+UseSerialGC}" $(WITH_DYNAMODB)
# With the gate's real servers installed: Debian's prometheus and
# prometheus-alertmanager (installed by the script as root when missing; the
# tests start their own on free loopback ports).
WITH_GATES := scripts/with-gate-servers.sh
# With the browser of the web page's tests installed: Debian's chromium
# (installed by the script as root when missing; each test starts its own,
# headless, through chromedp).
WITH_CHROMIUM := scripts/with-chromium.sh
# With the AWS CLI, which the README's walk-through calls and its test runs
# (installed by the script as root when missing: Debian's awscli).
WITH_AWSCLI := scripts/with-aws-cli.sh

# test: the checks, then every test of the module, the DynamoDB integration
# tests (adapters/store) and the web page's tests in Chromium included, the
# CDK synth and the infra module's tests, the local cloud's and the
# supervisor's end-to-end tests, against one DynamoDB Local; independent
# phases side by side, the time of each printed (scripts/test.sh).
test:
	scripts/test.sh

check: fmt vet tidy asl

# tidy: go.mod and go.sum of both modules are what `go mod tidy` makes them.
tidy:
	$(GO) mod tidy -diff
	cd infra && $(GO) mod tidy -diff

# asl: the state machines through asl-validator (what AWS would refuse).
asl: node_modules/.bin/asl-validator
	node_modules/.bin/asl-validator --json-path statemachines/rollout.asl.json

node_modules/.bin/asl-validator: package.json package-lock.json
	npm ci --no-audit --no-fund --no-update-notifier
	@touch $@

# synth: cdk synth of the CDK app in infra/ without AWS credentials, and the
# app's assertion tests (scripts/synth.sh).
synth:
	scripts/synth.sh

fmt:
	@out=$$(find . \( -name node_modules -o -name cdk.out -o -name .cdk.out -o -name .cdk.out-cloud -o -name .git -o -path ./build \) -prune -o -name '*.go' -print | xargs -r gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# unit: the tests that need nothing but Go; the DynamoDB integration tests skip.
unit:
	MYRIARCH_UNIT_ONLY=1 $(GO) test -count=1 $(PKGS)

# integration: the store's tests against DynamoDB Local.
integration:
	$(WITH_DYNAMODB) $(GO) test -count=1 ./adapters/store/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./core/... ./adapters/... ./local/...

# storeload: items and capacity units of a 1,000-target pass and of 1,000
# agent reports, measured against DynamoDB Local (examples/storeload).
storeload:
	$(WITH_DYNAMODB) $(GO) run ./examples/storeload

# gatewayload: memory, CPU and DynamoDB calls per idle agent of the gateway
# and of a baseline opamp-go server, 1,000 to 10,000 agents, and the push of
# a configuration to 1,000 agents (examples/gatewayload, docs/scale.md);
# about 15 minutes. GATEWAYLOAD_FLAGS=-quick for a run of a minute;
# GATEWAYLOAD_FLAGS="-together -spread 30s -wave 0" measures both servers side
# by side with heartbeats spread evenly (the fair CPU comparison).
GATEWAYLOAD_FLAGS ?=
gatewayload:
	$(GO) build -o bin/gatewayload ./examples/gatewayload
	$(BENCH_DYNAMODB) bin/gatewayload $(GATEWAYLOAD_FLAGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./core/policy

# demo: the README's main command. The local stack (DynamoDB Local, the local
# Step Functions endpoint, the Lambdas in one process, the API, the gateway,
# the planner schedule, the stream delivery) with 50 simulated collectors:
# a configuration rollout approved through the API, then a version rollout.
# cloud: the synthesized stack as AWS runs it, on this machine
# (scripts/cloud.sh): every Lambda from its own bootstrap under the Lambda
# Runtime Interface Emulator, the API Gateway front, the streams' event
# source mappings, the schedules, the state machine and the gateway from
# the template, every AWS call held to its role's IAM policy; then the
# demo's rollouts. cloud-run serves it until Ctrl-C; cloud-test runs its
# end-to-end tests (part of `make test`).
WITH_RIE := scripts/with-lambda-rie.sh
cloud:
	$(WITH_GATES) $(WITH_RIE) $(WITH_DYNAMODB) scripts/cloud.sh demo
cloud-run:
	$(WITH_GATES) $(WITH_RIE) $(WITH_DYNAMODB) scripts/cloud.sh run
cloud-test:
	$(WITH_GATES) $(WITH_RIE) $(WITH_DYNAMODB) scripts/cloud.sh test

# supervisor-test: the OpenTelemetry OpAMP supervisor with the configuration
# of examples/supervisor, over a collector built from its builder manifest
# (both built into build/tools from the module proxy once), takes a rollout
# on the local stack and comes back as itself after a restart.
supervisor-test:
	scripts/with-supervisor.sh $(WITH_DYNAMODB) $(GO) test -count=1 -timeout 20m -tags supervisor -run 'TestSupervisor_(ExampleConfiguration|Updater)$$' ./local/stack/

# The demo's printed times count from make's start (-since, in whole
# seconds, taken when make reads this file), so that they include the build
# and DynamoDB Local's start.
demo: DEMO_SINCE := $(shell date +%s)
demo: bin/myriarch-local
	$(WITH_GATES) $(WITH_DYNAMODB) bin/myriarch-local demo -since $(DEMO_SINCE) $(LOCAL_ADDRS)

# run: the same stack with 20 simulated collectors, kept running for myrctl,
# curl and the web page; Ctrl-C or SIGTERM stops the stack and DynamoDB Local,
# a line for each part. MYRIARCH_TOKENS_FILE names a token table of more
# people (bin/myriarch-local token adds one; README: More people).
# DATA=dir keeps the state (DynamoDB Local on disk, the tokens) for the next
# run; AGENTS=0 starts no simulated fleet. GATEWAY_PROCESS=1 runs the OpAMP
# gateway as its own process (bin/opamp-gateway), to be killed and started
# again on its own; the stack prints the command line that starts it.
# MYRIARCH_PROMETHEUS_URL and MYRIARCH_ALERTMANAGER_URL point the gates at a
# Prometheus and an Alertmanager of yours: the stack then starts none of that
# kind, and its Debian package is not needed.
GATEWAY_PROCESS ?=
GATEWAY_PROCESS_ON = $(filter 1 yes true,$(GATEWAY_PROCESS))
run: bin/myriarch-local $(if $(GATEWAY_PROCESS_ON),bin/opamp-gateway)
	$(WITH_GATES) --unless-url-set $(WITH_DYNAMODB) bin/myriarch-local run $(LOCAL_ADDRS) -agents $(AGENTS) -metrics-target $(METRICS) $(if $(GATEWAY_PROCESS_ON),-gateway-process)

# The addresses of the local stack: make run API=127.0.0.1:9080 ...
API ?= 127.0.0.1:8080
GATEWAY ?= 127.0.0.1:4320
SFN ?= 127.0.0.1:8083
AGENTS ?= 20
# METRICS: where the simulated fleet serves the metrics Prometheus scrapes.
METRICS ?= 127.0.0.1:9464
LOCAL_ADDRS = -api $(API) -gateway $(GATEWAY) -sfn $(SFN)
# DATA: the scripts and the stack read it as MYRIARCH_DATA.
ifneq ($(DATA),)
export MYRIARCH_DATA := $(DATA)
endif

# The stack runs as a built binary rather than under `go run`, which would
# not pass SIGTERM on to it.
bin/myriarch-local: FORCE
	$(GO) build -o $@ ./cmd/myriarch-local

bin/opamp-gateway: FORCE
	$(GO) build -o $@ ./opamp-gateway

.PHONY: FORCE
FORCE:

# screenshot: docs/img/rollout-page.png, the rollout page of a live local
# stack captured in Chromium (examples/uishot).
screenshot:
	$(WITH_CHROMIUM) $(WITH_DYNAMODB) $(GO) run ./examples/uishot -out docs/img/rollout-page.png

# bench-assign: from an agent's first report to its assignment, 100 simulated
# agents connecting to the local stack at once (p50/p95 in ms).
bench-assign:
	$(WITH_DYNAMODB) $(GO) test -run '^$$' -bench AssignmentLatency -benchtime 1x ./local/stack

# bench-wave: a configuration rollout whose one wave starts 1,000 simulated
# agents at once (maxConcurrent 0): what the stack asks of DynamoDB per
# target (requests, items, bytes, RCU/WCU per kind of call, printed as a
# table), and decision → agent received, APPLIED report → target verifying,
# p50/p95/max in ms (docs/scale.md). About two minutes.
# MYRIARCH_WAVE_AGENTS sets the wave's size; MYRIARCH_WAVE_WARMUP=N rolls N
# unmeasured waves first (about 15 s each), for the emulator's steady state.
bench-wave:
	MYRIARCH_WAVE_AGENTS=$${MYRIARCH_WAVE_AGENTS:-1000} $(BENCH_DYNAMODB) $(GO) test -run '^$$' -bench WaveTransitionLatency -benchtime 1x -timeout 20m ./local/stack

# bench-evaluate: one evaluation of the engine's evaluate task over a rollout
# of 10,000 and of 100,000 targets on DynamoDB Local (the one that begins
# the second wave, starting 1,000 targets): CPU seconds, peak heap and
# resident memory, allocations, DynamoDB requests, items and capacity units
# (docs/scale.md). About 2 minutes on a quiet machine, most of it storing
# the 100,000 agents and targets; the emulator needs a larger heap for them
# than BENCH_DYNAMODB's (with 768 MB it spends its time collecting). Each
# size runs in a process of its own against a DynamoDB Local of its own:
# after the 10,000, the same emulator stored the 100,000 eight times slower
# and the evaluation's own CPU time was 1.6 times that on a fresh one.
# MYRIARCH_EVALUATE_TARGETS=10000 for the smaller size alone.
bench-evaluate:
	for n in $$(echo "$${MYRIARCH_EVALUATE_TARGETS:-10000,100000}" | tr , ' '); do \
		MYRIARCH_EVALUATE_TARGETS=$$n DYNAMODB_LOCAL_JAVA_OPTS="$${BENCH_DYNAMODB_JAVA_OPTS:--Xms256m -Xmx1536m -XX:+UseSerialGC}" \
			$(WITH_DYNAMODB) $(GO) test -run '^$$' -bench Evaluate_100kTargets -benchtime 1x -timeout 60m ./adapters/enginetask || exit 1; \
	done

# ddbwrites: conditional single-item writes per second that DynamoDB Local
# sustains at 1 to 128 in flight (examples/ddbwrites, docs/scale.md).
ddbwrites:
	$(WITH_DYNAMODB) $(GO) run ./examples/ddbwrites -n 2000 -concurrency 8,1,8,32,64,128
