package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Config is everything a deployment may choose. Each field comes from CDK
// context (`cdk deploy -c key=value` or cdk.json), else from an environment
// variable, else from its default; docs/deploy.md lists them.
type Config struct {
	Stage              string // names the stack and its resources: Myriarch-<stage>
	DomainName         string // the gateway's public host name; empty: the load balancer's DNS name
	CertificateArn     string // ACM certificate of the gateway's TLS listener; empty: a stack parameter
	AgentTokenSecret   string // Secrets Manager secret (name or ARN) holding the agents' bearer tokens; empty: created
	GatewayImage       string // image URI of the gateway; empty: built from opamp-gateway/Dockerfile at deploy time
	GatewayArch        string // arm64 or x86_64: the CPU of the gateway tasks and its image
	GatewayTasks       int    // gateway tasks behind the load balancer, at least 2
	NatGateways        int    // 0: tasks run in public subnets (no NAT cost); more: private subnets behind NAT
	DeletionProtection bool   // DynamoDB deletion protection and retained tables
	ApiRateLimit       int    // API Gateway steady-state requests per second
	ApiBurstLimit      int    // API Gateway burst
	AlarmTopicArn      string // SNS topic that alarms notify; empty: alarms without actions
	RepoRoot           string // the repository: statemachines/, opamp-gateway/
	LambdaBuildDir     string // where scripts/build-lambdas.sh put <function>/bootstrap
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
	{"gatewayImage", "MYRIARCH_GATEWAY_IMAGE", ""},
	{"gatewayArch", "MYRIARCH_GATEWAY_ARCH", "arm64"},
	{"gatewayTasks", "MYRIARCH_GATEWAY_TASKS", "2"},
	{"natGateways", "MYRIARCH_NAT_GATEWAYS", "0"},
	{"deletionProtection", "MYRIARCH_DELETION_PROTECTION", "true"},
	{"apiRateLimit", "MYRIARCH_API_RATE_LIMIT", "50"},
	{"apiBurstLimit", "MYRIARCH_API_BURST_LIMIT", "100"},
	{"alarmTopicArn", "MYRIARCH_ALARM_TOPIC_ARN", ""},
	{"repoRoot", "MYRIARCH_REPO_ROOT", ".."},
	{"lambdaBuildDir", "MYRIARCH_LAMBDA_BUILD_DIR", ""}, // default: <repoRoot>/build/lambda
}

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
		Stage:            v["stage"],
		DomainName:       v["domainName"],
		CertificateArn:   v["certificateArn"],
		AgentTokenSecret: v["agentTokenSecret"],
		GatewayImage:     v["gatewayImage"],
		GatewayArch:      v["gatewayArch"],
		AlarmTopicArn:    v["alarmTopicArn"],
		RepoRoot:         v["repoRoot"],
		LambdaBuildDir:   v["lambdaBuildDir"],
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
	c.ApiRateLimit = number("apiRateLimit", 1)
	c.ApiBurstLimit = number("apiBurstLimit", 1)
	dp, err := strconv.ParseBool(v["deletionProtection"])
	if err != nil {
		errs = append(errs, fmt.Sprintf("deletionProtection: %q is not true or false", v["deletionProtection"]))
	}
	c.DeletionProtection = dp
	if !stageName.MatchString(c.Stage) {
		errs = append(errs, fmt.Sprintf("stage: %q must be 1-20 lower-case letters, digits or dashes, starting with a letter", c.Stage))
	}
	if c.GatewayArch != "arm64" && c.GatewayArch != "x86_64" {
		errs = append(errs, fmt.Sprintf("gatewayArch: %q must be arm64 or x86_64", c.GatewayArch))
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}
