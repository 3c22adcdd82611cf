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
		{"defaults", nil, nil, "dev", 2, repo(t, "build", "lambda"), true},                                                                                  // nothing set
		{"env", nil, map[string]string{"MYRIARCH_STAGE": "prod", "MYRIARCH_GATEWAY_TASKS": "3"}, "prod", 3, repo(t, "build", "lambda"), true},               // environment over default
		{"context over env", map[string]string{"stage": "qa"}, map[string]string{"MYRIARCH_STAGE": "prod"}, "qa", 2, repo(t, "build", "lambda"), true},      // context wins
		{"empty context ignored", map[string]string{"stage": ""}, map[string]string{"MYRIARCH_STAGE": "prod"}, "prod", 2, repo(t, "build", "lambda"), true}, // -c stage= does not blank it
		{"repo root moves lambdas", map[string]string{"repoRoot": "/r"}, nil, "dev", 2, "/r/build/lambda", true},                                            // build dir follows the root
		{"explicit lambda dir", map[string]string{"lambdaBuildDir": "/tmp/l"}, nil, "dev", 2, "/tmp/l", true},                                               // override
		{"protection off", map[string]string{"deletionProtection": "false"}, nil, "dev", 2, repo(t, "build", "lambda"), false},                              // local stacks
		{"protection off by env", nil, map[string]string{"MYRIARCH_DELETION_PROTECTION": "0"}, "dev", 2, repo(t, "build", "lambda"), false},                 // strconv.ParseBool forms
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
		{"gatewayTasks", "1", "gatewayTasks"},                                                // one task is a single point of failure
		{"gatewayTasks", "two", "gatewayTasks"},                                              // not a number
		{"gatewayMaxTasks", "1", "gatewayMaxTasks"},                                          // fewer than gatewayTasks
		{"natGateways", "-1", "natGateways"},                                                 // negative
		{"plannerReservedConcurrency", "2", "plannerReservedConcurrency"},                    // more than one planner at once is no single writer
		{"packageDownloadUrl", "http://d.example.com/{version}", "packageDownloadUrl"},       // not https: a download could be changed on the way
		{"packageDownloadUrl", "https://d.example.com/otelcol.tar.gz", "packageDownloadUrl"}, // every version would be the same file
		{"packageChecksumsUrl", "http://d.example.com/{version}/checksums.txt", "packageChecksumsUrl"},
		{"packageSignatureUrl", "https://d.example.com/otelcol.tar.gz.minisig", "packageSignatureUrl"},
		{"apiRateLimit", "0", "apiRateLimit"},                             // would refuse every request
		{"deletionProtection", "maybe", "deletionProtection"},             // not a boolean
		{"gateway", "no", "gateway"},                                      // strconv.ParseBool forms only
		{"stage", "Prod", "stage"},                                        // upper case breaks resource names
		{"stage", "1st", "stage"},                                         // must start with a letter
		{"stage", "a-very-long-stage-name-x", "stage"},                    // over 20 characters
		{"gatewayArch", "aarch64", "gatewayArch"},                         // only ECS's names
		{"releaseRefresh", "acme-otelcol", "releaseRefresh"},              // a distribution without a known publisher names its repository
		{"releaseRefresh", "Otelcol", "releaseRefresh"},                   // not a distribution name
		{"releaseSourceUrl", "http://api.github.com", "releaseSourceUrl"}, // the refresh speaks https only
		{"approvalWaitAlarm", "1d", "approvalWaitAlarm"},                  // Go durations: 24h
		{"approvalWaitAlarm", "1m", "approvalWaitAlarm"},                  // shorter than the watchdog's 5 minutes between measurements
		{"approvalWaitAlarm", "6h0m0.5s", "approvalWaitAlarm"},            // the metric is in whole seconds
		{"agentRetention", "7d", "agentRetention"},                        // Go durations: 168h
		{"agentRetention", "-1h", "agentRetention"},                       // negative
		{"agentRetention", "10m", "agentRetention"},                       // minutes: a restart would make agents gone
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
		{nil, nil, 24 * time.Hour}, // the default
		{nil, map[string]string{"MYRIARCH_APPROVAL_WAIT_ALARM": "8h"}, 8 * time.Hour},
		{map[string]string{"approvalWaitAlarm": "90m"}, map[string]string{"MYRIARCH_APPROVAL_WAIT_ALARM": "8h"}, 90 * time.Minute}, // context wins
		{map[string]string{"approvalWaitAlarm": "5m"}, nil, 5 * time.Minute},                                                       // the shortest: one measurement
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
		{nil, nil, ""}, // the functions' default, 7 days
		{nil, map[string]string{"MYRIARCH_AGENT_RETENTION": "720h"}, "720h"},
		{map[string]string{"agentRetention": "48h"}, map[string]string{"MYRIARCH_AGENT_RETENTION": "720h"}, "48h"}, // context wins
		{map[string]string{"agentRetention": "0"}, nil, "0"},                                                       // never gone
		{map[string]string{"agentRetention": "1h"}, nil, "1h"},                                                     // the shortest
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
		{"none", nil, "", true}, // every request refused until configured
		{"inline", map[string]string{"apiTokens": tokenTable}, tokenTable, true},                                           // the JSON itself
		{"file under the repo root", map[string]string{"repoRoot": dir, "apiTokensFile": "tokens.json"}, tokenTable, true}, // relative to repoRoot
		{"absolute file", map[string]string{"apiTokensFile": filepath.Join(dir, "tokens.json")}, tokenTable, true},
		{"both", map[string]string{"apiTokens": tokenTable, "apiTokensFile": "x.json"}, "set one", false},
		{"missing file", map[string]string{"apiTokensFile": filepath.Join(dir, "nope.json")}, "apiTokensFile", false},
		{"not JSON", map[string]string{"apiTokens": "secret"}, "apiTokens", false},                                      // a plain token is refused
		{"bad role", map[string]string{"apiTokens": strings.Replace(tokenTable, "operator", "root", 1)}, "role", false}, // pkg/api's own check
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
