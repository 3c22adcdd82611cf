package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/windows"
)

// Config is everything a deployment may choose. Each field comes from CDK
// context (`cdk deploy -c key=value` or cdk.json), else from an environment
// variable, else from its default; docs/deploy.md lists them.
type Config struct {
	Stage            string // names the stack and its resources: Myriarch-<stage>
	DomainName       string // the gateway's public host name; empty: the load balancer's DNS name
	CertificateArn   string // ACM certificate of the gateway's TLS listener; empty: a stack parameter
	AgentTokenSecret string // Secrets Manager secret (name or ARN) holding the agents' bearer tokens; empty: created
	Gateway          bool   // run the gateway on Fargate; false: run it elsewhere (LocalStack without ECS)
	GatewayImage     string // image URI of the gateway; empty: built from opamp-gateway/Dockerfile at deploy time
	GatewayArch      string // arm64 or x86_64: the CPU of the gateway tasks and its image
	GatewayTasks     int    // gateway tasks behind the load balancer, at least 2
	GatewayMaxTasks  int    // the most tasks the gateway's scaling adds, at least GatewayTasks
	// PlannerReservedConcurrency is the planner's reserved concurrency: 1
	// (the default) makes it the single writer of rollouts; 0 reserves none
	// (its runs then race only through the conditional writes of the
	// store, the active-rollout lock and the rollout's version), for an
	// account whose concurrency quota is 100 or less: AWS keeps 100
	// unreserved, and a deploy that would reserve below that fails.
	PlannerReservedConcurrency int
	// PackageDownloadURL and PackageName are what the gateway offers in an
	// OpAMP package offer (the updater executor's version rollouts): the
	// URL template of a collector archive, {version} replaced by the
	// version offered, and the package's name; empty: the gateway's own
	// default, a host that never resolves.
	PackageDownloadURL string
	PackageName        string
	// PackageChecksumsURL and PackageSignatureURL are URL templates of a
	// release's checksums file and of an archive's minisign signature, which
	// a myriarch-updater needs to take an offer (docs/updater.md); empty:
	// offers carry neither, and updaters refuse them.
	PackageChecksumsURL string
	PackageSignatureURL string
	NatGateways         int           // 0: tasks run in public subnets (no NAT cost); more: private subnets behind NAT
	DeletionProtection  bool          // DynamoDB deletion protection and retained tables
	APIRateLimit        int           // API Gateway steady-state requests per second
	APIBurstLimit       int           // API Gateway burst
	AlarmTopicArn       string        // SNS topic that alarms notify; empty: alarms without actions
	ApprovalWaitAlarm   time.Duration // how long a rollout may wait for approval before its alarm fires (the watchdog's metric)
	APITokens           string        // the operators' token table (JSON of sha256 hashes, adapters/api.ParseTokens); empty: every request is refused
	DefaultTimezone     string        // IANA zone of maintenance windows that name none (MYRIARCH_DEFAULT_TIMEZONE); empty: UTC
	ReconnectGrace      string        // how long a closed agent connection still counts as online for rollouts (a duration); empty: 10s
	AgentRetention      string        // how long an agent may be offline before it is gone (a duration, 0: never); empty: 168h
	Releases            string        // comma-separated collector releases the API offers as versions
	Platforms           string        // comma-separated platforms of those releases
	ReleaseRefresh      string        // distributions whose published releases the daily refresh imports (releases.ParseTargets); empty: the schedule is off
	ReleaseSourceURL    string        // the GitHub REST API the refresh asks; empty: https://api.github.com
	NotificationsTopic  bool          // the example routing of notifications: an SNS topic and a rule for paused, failed and rolled-back rollouts
	// The health gates the engine reads (gates.go).
	PrometheusURL        string       // the root of Prometheus's HTTP API; with an AMP workspace and unset: the workspace's query URL
	AMPWorkspace         ampWorkspace // Amazon Managed Service for Prometheus; zero: none
	AlertmanagerURL      string       // the root of Alertmanager's API (v2)
	CloudWatchGates      bool         // the engine reads CloudWatch metrics and alarms
	GateVpcID            string       // the VPC the engine runs in to reach collectors, Prometheus and Alertmanager; empty: no VPC
	GateSubnetIDs        []string     // the engine's subnets in that VPC, sorted
	GateSecurityGroupIDs []string     // the engine's security groups, sorted; empty with a VPC: one is created
	RepoRoot             string       // the repository: statemachines/, opamp-gateway/
	LambdaBuildDir       string       // where scripts/build-lambdas.sh put <function>/bootstrap
}

// stageName keeps every derived name (stack, tables, functions, log
// groups, the state machine) within AWS's limits and character sets.
var stageName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// setting is one configurable value: its context key, environment
// variable and default.
type setting struct {
	key, env, def string
}

var settings = []setting{
	{"stage", "MYRIARCH_STAGE", "dev"},
	{"domainName", "MYRIARCH_DOMAIN_NAME", ""},
	{"certificateArn", "MYRIARCH_CERTIFICATE_ARN", ""},
	{"agentTokenSecret", "MYRIARCH_AGENT_TOKEN_SECRET", ""},
	{"gateway", "MYRIARCH_GATEWAY", "true"},
	{"gatewayImage", "MYRIARCH_GATEWAY_IMAGE", ""},
	{"gatewayArch", "MYRIARCH_GATEWAY_ARCH", "arm64"},
	{"gatewayTasks", "MYRIARCH_GATEWAY_TASKS", "2"},
	{"gatewayMaxTasks", "MYRIARCH_GATEWAY_MAX_TASKS", "10"},                      // 10 tasks: 400,000 agents
	{"plannerReservedConcurrency", "MYRIARCH_PLANNER_RESERVED_CONCURRENCY", "1"}, // 0 or 1
	{"packageDownloadUrl", "MYRIARCH_PACKAGE_DOWNLOAD_URL", ""},                  // https, with {version}
	{"packageName", "MYRIARCH_PACKAGE_NAME", ""},
	{"packageChecksumsUrl", "MYRIARCH_PACKAGE_CHECKSUMS_URL", ""}, // https, with {version}
	{"packageSignatureUrl", "MYRIARCH_PACKAGE_SIGNATURE_URL", ""}, // https, with {version}
	{"natGateways", "MYRIARCH_NAT_GATEWAYS", "0"},
	{"deletionProtection", "MYRIARCH_DELETION_PROTECTION", "true"},
	{"apiRateLimit", "MYRIARCH_API_RATE_LIMIT", "50"},
	{"apiBurstLimit", "MYRIARCH_API_BURST_LIMIT", "100"},
	{"alarmTopicArn", "MYRIARCH_ALARM_TOPIC_ARN", ""},
	{"approvalWaitAlarm", "MYRIARCH_APPROVAL_WAIT_ALARM", "24h"}, // a duration, at least the watchdog's 5 minutes
	{"apiTokens", "MYRIARCH_API_TOKENS", ""},
	{"apiTokensFile", "MYRIARCH_API_TOKENS_FILE", ""}, // read at synth; relative to repoRoot
	{"defaultTimezone", "MYRIARCH_DEFAULT_TIMEZONE", ""},
	{"reconnectGrace", "MYRIARCH_RECONNECT_GRACE", ""},
	{"agentRetention", "MYRIARCH_AGENT_RETENTION", ""}, // empty: the functions' default, 7 days
	{"releases", "MYRIARCH_RELEASES", ""},
	{"platforms", "MYRIARCH_PLATFORMS", ""},
	{"releaseRefresh", "MYRIARCH_RELEASE_REFRESH", ""},
	{"releaseSourceUrl", "MYRIARCH_RELEASE_SOURCE_URL", ""},
	{"notificationsTopic", "MYRIARCH_NOTIFICATIONS_TOPIC", "false"},
	{"prometheusUrl", "MYRIARCH_PROMETHEUS_URL", ""},
	{"ampWorkspaceArn", "MYRIARCH_AMP_WORKSPACE_ARN", ""},
	{"alertmanagerUrl", "MYRIARCH_ALERTMANAGER_URL", ""},
	{"cloudwatchGates", "MYRIARCH_CLOUDWATCH_GATES", "true"},
	{"gateVpcId", "MYRIARCH_GATE_VPC_ID", ""},
	{"gateSubnetIds", "MYRIARCH_GATE_SUBNET_IDS", ""},                // comma-separated
	{"gateSecurityGroupIds", "MYRIARCH_GATE_SECURITY_GROUP_IDS", ""}, // comma-separated
	{"repoRoot", "MYRIARCH_REPO_ROOT", ""},                           // default: the nearest directory up from here with cdk.json
	{"lambdaBuildDir", "MYRIARCH_LAMBDA_BUILD_DIR", ""},              // default: <repoRoot>/build/lambda
}

// minAgentRetention is the shortest agent retention but 0 (never gone).
const minAgentRetention = time.Hour

// LoadConfig resolves every setting: context wins over environment, which
// wins over the default. context and env are lookups so that tests pass maps.
func LoadConfig(context, env func(string) (string, bool)) (Config, error) {
	v := map[string]string{}
	for _, s := range settings {
		v[s.key] = s.def
		if e, ok := env(s.env); ok && e != "" {
			v[s.key] = e
		}
		if c, ok := context(s.key); ok && c != "" {
			v[s.key] = c
		}
	}
	c := Config{
		Stage:               v["stage"],
		DomainName:          v["domainName"],
		CertificateArn:      v["certificateArn"],
		AgentTokenSecret:    v["agentTokenSecret"],
		GatewayImage:        v["gatewayImage"],
		GatewayArch:         v["gatewayArch"],
		AlarmTopicArn:       v["alarmTopicArn"],
		APITokens:           v["apiTokens"],
		DefaultTimezone:     v["defaultTimezone"],
		ReconnectGrace:      v["reconnectGrace"],
		PackageDownloadURL:  v["packageDownloadUrl"],
		PackageName:         v["packageName"],
		PackageChecksumsURL: v["packageChecksumsUrl"],
		PackageSignatureURL: v["packageSignatureUrl"],
		AgentRetention:      v["agentRetention"],
		Releases:            v["releases"],
		Platforms:           v["platforms"],
		ReleaseRefresh:      v["releaseRefresh"],
		ReleaseSourceURL:    v["releaseSourceUrl"],
		RepoRoot:            v["repoRoot"],
		LambdaBuildDir:      v["lambdaBuildDir"],
	}
	if c.RepoRoot == "" {
		root, err := findRepoRoot()
		if err != nil {
			return Config{}, err
		}
		c.RepoRoot = root
	}
	if c.LambdaBuildDir == "" {
		c.LambdaBuildDir = filepath.Join(c.RepoRoot, "build", "lambda")
	}
	var errs []string
	number := func(key string, min int) int {
		n, err := strconv.Atoi(v[key])
		if err != nil || n < min {
			errs = append(errs, fmt.Sprintf("%s: %q is not a whole number >= %d", key, v[key], min))
		}
		return n
	}
	c.GatewayTasks = number("gatewayTasks", 2) // one task dying must not disconnect the whole fleet
	c.NatGateways = number("natGateways", 0)
	if c.GatewayMaxTasks = number("gatewayMaxTasks", 2); c.GatewayMaxTasks < c.GatewayTasks {
		errs = append(errs, fmt.Sprintf("gatewayMaxTasks: %d is fewer than gatewayTasks %d", c.GatewayMaxTasks, c.GatewayTasks))
	}
	if c.PlannerReservedConcurrency = number("plannerReservedConcurrency", 0); c.PlannerReservedConcurrency > 1 {
		errs = append(errs, fmt.Sprintf("plannerReservedConcurrency: %d must be 0 or 1 (1: the single writer of rollouts)", c.PlannerReservedConcurrency))
	}
	c.APIRateLimit = number("apiRateLimit", 1)
	c.APIBurstLimit = number("apiBurstLimit", 1)
	boolean := func(key string) bool {
		b, err := strconv.ParseBool(v[key])
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q is not true or false", key, v[key]))
		}
		return b
	}
	c.DeletionProtection = boolean("deletionProtection")
	c.Gateway = boolean("gateway")
	c.CloudWatchGates = boolean("cloudwatchGates")
	c.NotificationsTopic = boolean("notificationsTopic")
	if !stageName.MatchString(c.Stage) {
		errs = append(errs, fmt.Sprintf("stage: %q must be 1-20 lower-case letters, digits or dashes, starting with a letter", c.Stage))
	}
	if c.GatewayArch != "arm64" && c.GatewayArch != "x86_64" {
		errs = append(errs, fmt.Sprintf("gatewayArch: %q must be arm64 or x86_64", c.GatewayArch))
	}
	if c.DefaultTimezone != "" {
		if _, err := windows.LoadZone(c.DefaultTimezone); err != nil { // the engine's own check
			errs = append(errs, fmt.Sprintf("defaultTimezone: %v", err))
		}
	}
	if u := c.PackageDownloadURL; u != "" && (!strings.HasPrefix(u, "https://") || !strings.Contains(u, "{version}")) {
		errs = append(errs, fmt.Sprintf("packageDownloadUrl: %q must be an https URL template with {version}, such as https://downloads.example.com/otelcol/{version}/otelcol.tar.gz", u))
	}
	for key, u := range map[string]string{"packageChecksumsUrl": c.PackageChecksumsURL, "packageSignatureUrl": c.PackageSignatureURL} {
		if u != "" && (!strings.HasPrefix(u, "https://") || !strings.Contains(u, "{version}")) {
			errs = append(errs, fmt.Sprintf("%s: %q must be an https URL template with {version}", key, u))
		}
	}
	if c.ReconnectGrace != "" {
		if d, err := time.ParseDuration(c.ReconnectGrace); err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("reconnectGrace: %q is not a duration such as 10s", c.ReconnectGrace))
		}
	}
	// Shorter than an hour, a gateway deploy or a host's reboot would make
	// agents gone (and drop them from their fleet's counts and from new
	// rollouts) although they are merely restarting; 0 keeps them for ever.
	if c.AgentRetention != "" {
		if d, err := time.ParseDuration(c.AgentRetention); err != nil || d < 0 || (d > 0 && d < minAgentRetention) {
			errs = append(errs, fmt.Sprintf("agentRetention: %q is not 0 or a duration of at least %v, such as 168h", c.AgentRetention, minAgentRetention))
		}
	}
	// The watchdog measures the wait every 5 minutes, in whole seconds.
	if d, err := time.ParseDuration(v["approvalWaitAlarm"]); err != nil || d < watchdogEvery || d%time.Second != 0 {
		errs = append(errs, fmt.Sprintf("approvalWaitAlarm: %q is not a duration of whole seconds, at least %v, such as 24h", v["approvalWaitAlarm"], watchdogEvery))
	} else {
		c.ApprovalWaitAlarm = d
	}
	if _, err := releases.ParseTargets(c.ReleaseRefresh); err != nil { // the function's own check, at synth
		errs = append(errs, fmt.Sprintf("releaseRefresh: %v", err))
	}
	if c.ReleaseSourceURL != "" && !isURL(c.ReleaseSourceURL, "https") {
		errs = append(errs, fmt.Sprintf("releaseSourceUrl: %q is not an https URL such as https://api.github.com", c.ReleaseSourceURL))
	}
	errs = append(errs, c.loadGates(v)...)
	if err := c.loadAPITokens(v["apiTokensFile"]); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// isURL tells whether s is an absolute URL with a host and one of the
// schemes.
func isURL(s string, schemes ...string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && slices.Contains(schemes, u.Scheme)
}

// findRepoRoot is the nearest directory, from the working directory up,
// that holds cdk.json: the repository root whether the app runs from there
// (cdk synth) or from infra/ (go test).
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "cdk.json")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no cdk.json in the working directory or above: run from the repository, or set repoRoot")
		}
		dir = parent
	}
}

// loadAPITokens reads the token table from file (if set) and checks it as
// the authorizer will, so that a bad table fails the synthesis, not every
// request. Only hashes are in it: it may live in the Lambda environment.
func (c *Config) loadAPITokens(file string) error {
	if file != "" {
		if c.APITokens != "" {
			return fmt.Errorf("apiTokens and apiTokensFile: set one")
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(c.RepoRoot, file)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("apiTokensFile: %w", err)
		}
		c.APITokens = string(raw)
	}
	if c.APITokens == "" {
		return nil
	}
	if _, err := api.ParseTokens([]byte(c.APITokens)); err != nil {
		return fmt.Errorf("apiTokens: %w", err)
	}
	return nil
}
