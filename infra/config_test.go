package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// repo is the repository root as the tests see it (they run in infra/).
func repo(t *testing.T, rel ...string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, rel...)...)
}

func TestLoadConfig_Precedence(t *testing.T) {
	tests := []struct {
		name     string
		context  map[string]string
		env      map[string]string
		stage    string
		tasks    int
		lambdas  string
		protects bool
	}{
		{name: "defaults", context: nil, env: nil, stage: "dev", tasks: 2, lambdas: repo(t, "build", "lambda"), protects: true},                                                                                  // nothing set
		{name: "env", context: nil, env: map[string]string{"MYRIARCH_STAGE": "prod", "MYRIARCH_GATEWAY_TASKS": "3"}, stage: "prod", tasks: 3, lambdas: repo(t, "build", "lambda"), protects: true},               // environment over default
		{name: "context over env", context: map[string]string{"stage": "qa"}, env: map[string]string{"MYRIARCH_STAGE": "prod"}, stage: "qa", tasks: 2, lambdas: repo(t, "build", "lambda"), protects: true},      // context wins
		{name: "empty context ignored", context: map[string]string{"stage": ""}, env: map[string]string{"MYRIARCH_STAGE": "prod"}, stage: "prod", tasks: 2, lambdas: repo(t, "build", "lambda"), protects: true}, // -c stage= does not blank it
		{name: "repo root moves lambdas", context: map[string]string{"repoRoot": "/r"}, env: nil, stage: "dev", tasks: 2, lambdas: "/r/build/lambda", protects: true},                                            // build dir follows the root
		{name: "explicit lambda dir", context: map[string]string{"lambdaBuildDir": "/tmp/l"}, env: nil, stage: "dev", tasks: 2, lambdas: "/tmp/l", protects: true},                                               // override
		{name: "protection off", context: map[string]string{"deletionProtection": "false"}, env: nil, stage: "dev", tasks: 2, lambdas: repo(t, "build", "lambda"), protects: false},                              // local stacks
		{name: "protection off by env", context: nil, env: map[string]string{"MYRIARCH_DELETION_PROTECTION": "0"}, stage: "dev", tasks: 2, lambdas: repo(t, "build", "lambda"), protects: false},                 // strconv.ParseBool forms
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(lookup(tt.context), lookup(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.Stage != tt.stage || c.GatewayTasks != tt.tasks || c.LambdaBuildDir != tt.lambdas || c.DeletionProtection != tt.protects {
				t.Errorf("got stage %q tasks %d lambdas %q protection %v", c.Stage, c.GatewayTasks, c.LambdaBuildDir, c.DeletionProtection)
			}
		})
	}
}

func TestLoadConfig_Defaults(t *testing.T) {
	c, err := LoadConfig(lookup(nil), lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Stage: "dev", Gateway: true, GatewayArch: "arm64", GatewayTasks: 2, GatewayMaxTasks: 10, NatGateways: 0, PlannerReservedConcurrency: 1, DeletionProtection: true,
		APIRateLimit: 50, APIBurstLimit: 100, CloudWatchGates: true, ApprovalWaitAlarm: 24 * time.Hour, RepoRoot: repo(t), LambdaBuildDir: repo(t, "build", "lambda")}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", c, want)
	}
}

func TestLoadConfig_Refuses(t *testing.T) {
	tests := []struct {
		key, value, message string
	}{
		{key: "gatewayTasks", value: "1", message: "gatewayTasks"},                                                // one task is a single point of failure
		{key: "gatewayTasks", value: "two", message: "gatewayTasks"},                                              // not a number
		{key: "gatewayMaxTasks", value: "1", message: "gatewayMaxTasks"},                                          // fewer than gatewayTasks
		{key: "natGateways", value: "-1", message: "natGateways"},                                                 // negative
		{key: "plannerReservedConcurrency", value: "2", message: "plannerReservedConcurrency"},                    // more than one planner at once is no single writer
		{key: "packageDownloadUrl", value: "http://d.example.com/{version}", message: "packageDownloadUrl"},       // not https: a download could be changed on the way
		{key: "packageDownloadUrl", value: "https://d.example.com/otelcol.tar.gz", message: "packageDownloadUrl"}, // every version would be the same file
		{key: "packageChecksumsUrl", value: "http://d.example.com/{version}/checksums.txt", message: "packageChecksumsUrl"},
		{key: "packageSignatureUrl", value: "https://d.example.com/otelcol.tar.gz.minisig", message: "packageSignatureUrl"},
		{key: "apiRateLimit", value: "0", message: "apiRateLimit"},                             // would refuse every request
		{key: "deletionProtection", value: "maybe", message: "deletionProtection"},             // not a boolean
		{key: "gateway", value: "no", message: "gateway"},                                      // strconv.ParseBool forms only
		{key: "stage", value: "Prod", message: "stage"},                                        // upper case breaks resource names
		{key: "stage", value: "1st", message: "stage"},                                         // must start with a letter
		{key: "stage", value: "a-very-long-stage-name-x", message: "stage"},                    // over 20 characters
		{key: "gatewayArch", value: "aarch64", message: "gatewayArch"},                         // only ECS's names
		{key: "releaseRefresh", value: "acme-otelcol", message: "releaseRefresh"},              // a distribution without a known publisher names its repository
		{key: "releaseRefresh", value: "Otelcol", message: "releaseRefresh"},                   // not a distribution name
		{key: "releaseSourceUrl", value: "http://api.github.com", message: "releaseSourceUrl"}, // the refresh speaks https only
		{key: "approvalWaitAlarm", value: "1d", message: "approvalWaitAlarm"},                  // Go durations: 24h
		{key: "approvalWaitAlarm", value: "1m", message: "approvalWaitAlarm"},                  // shorter than the watchdog's 5 minutes between measurements
		{key: "approvalWaitAlarm", value: "6h0m0.5s", message: "approvalWaitAlarm"},            // the metric is in whole seconds
		{key: "agentRetention", value: "7d", message: "agentRetention"},                        // Go durations: 168h
		{key: "agentRetention", value: "-1h", message: "agentRetention"},                       // negative
		{key: "agentRetention", value: "10m", message: "agentRetention"},                       // minutes: a restart would make agents gone
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			_, err := LoadConfig(lookup(map[string]string{tt.key: tt.value}), lookup(nil))
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %v, want one naming %s", err, tt.message)
			}
		})
	}
}

func TestLoadConfig_ApprovalWaitAlarm(t *testing.T) {
	tests := []struct {
		context, env map[string]string
		want         time.Duration
	}{
		{context: nil, env: nil, want: 24 * time.Hour}, // the default
		{context: nil, env: map[string]string{"MYRIARCH_APPROVAL_WAIT_ALARM": "8h"}, want: 8 * time.Hour},
		{context: map[string]string{"approvalWaitAlarm": "90m"}, env: map[string]string{"MYRIARCH_APPROVAL_WAIT_ALARM": "8h"}, want: 90 * time.Minute}, // context wins
		{context: map[string]string{"approvalWaitAlarm": "5m"}, env: nil, want: 5 * time.Minute},                                                       // the shortest: one measurement
	}
	for _, tt := range tests {
		c, err := LoadConfig(lookup(tt.context), lookup(tt.env))
		if err != nil || c.ApprovalWaitAlarm != tt.want {
			t.Errorf("context %v env %v: %v %v, want %v", tt.context, tt.env, c.ApprovalWaitAlarm, err, tt.want)
		}
	}
}

func TestLoadConfig_AgentRetention(t *testing.T) {
	tests := []struct {
		context, env map[string]string
		want         string
	}{
		{context: nil, env: nil, want: ""}, // the functions' default, 7 days
		{context: nil, env: map[string]string{"MYRIARCH_AGENT_RETENTION": "720h"}, want: "720h"},
		{context: map[string]string{"agentRetention": "48h"}, env: map[string]string{"MYRIARCH_AGENT_RETENTION": "720h"}, want: "48h"}, // context wins
		{context: map[string]string{"agentRetention": "0"}, env: nil, want: "0"},                                                       // never gone
		{context: map[string]string{"agentRetention": "1h"}, env: nil, want: "1h"},                                                     // the shortest
	}
	for _, tt := range tests {
		c, err := LoadConfig(lookup(tt.context), lookup(tt.env))
		if err != nil || c.AgentRetention != tt.want {
			t.Errorf("context %v env %v: %q %v, want %q", tt.context, tt.env, c.AgentRetention, err, tt.want)
		}
	}
}

func TestSettings_DocumentedOnce(t *testing.T) {
	keys, envs := map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		if keys[s.key] || envs[s.env] {
			t.Errorf("setting %s / %s declared twice", s.key, s.env)
		}
		keys[s.key], envs[s.env] = true, true
		if !strings.HasPrefix(s.env, "MYRIARCH_") {
			t.Errorf("%s: environment variables of the app start with MYRIARCH_", s.env)
		}
	}
}

const tokenTable = `[{"tokenSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","actor":"user:11111111-1111-4111-8111-111111111111","displayName":"Dana","role":"operator"}]`

func TestLoadConfig_APITokens(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokens.json"), []byte(tokenTable), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		context map[string]string
		want    string // the table, or the error's text
		ok      bool
	}{
		{name: "none", context: nil, want: "", ok: true},                                                                                            // every request refused until configured
		{name: "inline", context: map[string]string{"apiTokens": tokenTable}, want: tokenTable, ok: true},                                           // the JSON itself
		{name: "file under the repo root", context: map[string]string{"repoRoot": dir, "apiTokensFile": "tokens.json"}, want: tokenTable, ok: true}, // relative to repoRoot
		{name: "absolute file", context: map[string]string{"apiTokensFile": filepath.Join(dir, "tokens.json")}, want: tokenTable, ok: true},
		{name: "both", context: map[string]string{"apiTokens": tokenTable, "apiTokensFile": "x.json"}, want: "set one", ok: false},
		{name: "missing file", context: map[string]string{"apiTokensFile": filepath.Join(dir, "nope.json")}, want: "apiTokensFile", ok: false},
		{name: "not JSON", context: map[string]string{"apiTokens": "secret"}, want: "apiTokens", ok: false},                                      // a plain token is refused
		{name: "bad role", context: map[string]string{"apiTokens": strings.Replace(tokenTable, "operator", "root", 1)}, want: "role", ok: false}, // adapters/api's own check
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(lookup(tt.context), lookup(nil))
			if tt.ok {
				if err != nil || c.APITokens != tt.want {
					t.Errorf("got %q %v, want %q", c.APITokens, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

// docs/deploy.md documents every setting with its environment variable.
func TestSettings_InTheDeployGuide(t *testing.T) {
	raw, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, s := range settings {
		if !strings.Contains(doc, "| `"+s.key+"` | `"+s.env+"` |") {
			t.Errorf("docs/deploy.md has no row for %s / %s", s.key, s.env)
		}
	}
}
