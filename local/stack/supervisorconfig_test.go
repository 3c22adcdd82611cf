package stack

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// examples/supervisor holds what the README says an agent needs, so that
// an edit cannot drop one unnoticed before make supervisor-test runs it:
// the URL and both headers, the capabilities a rollout reads, the
// collector's health check beside the supervisor's OpAMP extension, and a
// collector built with both extensions.
func TestSupervisorExample_HasWhatAnAgentNeeds(t *testing.T) {
	var sup struct {
		Server struct {
			Endpoint string            `yaml:"endpoint"`
			Headers  map[string]string `yaml:"headers"`
		} `yaml:"server"`
		Capabilities map[string]bool `yaml:"capabilities"`
		Agent        struct {
			ConfigFiles []string `yaml:"config_files"`
		} `yaml:"agent"`
	}
	var col struct {
		Extensions map[string]any `yaml:"extensions"`
		Service    struct {
			Extensions []string `yaml:"extensions"`
		} `yaml:"service"`
	}
	type module struct {
		Gomod string `yaml:"gomod"`
	}
	var builder struct {
		Extensions []module `yaml:"extensions"`
	}
	for file, into := range map[string]any{"supervisor.yaml": &sup, "collector.yaml": &col, "builder.yaml": &builder} {
		b, err := os.ReadFile("../../examples/supervisor/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if sup.Server.Endpoint != "${env:MYRIARCH_OPAMP_URL}" {
		t.Errorf("server.endpoint is %q", sup.Server.Endpoint)
	}
	for header, want := range map[string]string{"Authorization": "Bearer ${env:MYRIARCH_AGENT_TOKEN}", "X-Myriarch-Agent-Key": "${env:MYRIARCH_AGENT_KEY}"} {
		if got := sup.Server.Headers[header]; got != want {
			t.Errorf("server.headers.%s is %q, want %q", header, got, want)
		}
	}
	for _, c := range []string{"accepts_remote_config", "reports_remote_config", "reports_health", "reports_heartbeat"} {
		if !sup.Capabilities[c] {
			t.Errorf("capabilities.%s is not on", c)
		}
	}
	if sup.Capabilities["accepts_opamp_connection_settings"] {
		t.Error("capabilities.accepts_opamp_connection_settings is on: the supervisor does not keep an offered credential across its restarts")
	}
	for _, f := range []string{"${env:SUPERVISOR_EXAMPLE_DIR}/collector.yaml", "$OPAMP_EXTENSION_CONFIG", "$REMOTE_CONFIG"} {
		if !slices.Contains(sup.Agent.ConfigFiles, f) {
			t.Errorf("agent.config_files %v lacks %s", sup.Agent.ConfigFiles, f)
		}
	}
	if col.Extensions["healthcheckv2"] == nil || !slices.Contains(col.Service.Extensions, "healthcheckv2") {
		t.Errorf("collector.yaml does not run the health check v2 extension: %+v", col)
	}
	for _, ext := range []string{"/opampextension ", "/healthcheckv2extension "} {
		if !slices.ContainsFunc(builder.Extensions, func(m module) bool { return strings.Contains(m.Gomod, ext) }) {
			t.Errorf("builder.yaml builds no%s", strings.TrimSuffix(ext, " "))
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "[examples/supervisor](examples/supervisor)") {
		t.Error("the README's \"Your own agents\" does not point at examples/supervisor")
	}
}
