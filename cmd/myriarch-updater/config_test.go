package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const minimalConfig = `
server:
  endpoint: ws://127.0.0.1:4320/v1/opamp
  tokenFile: /etc/myriarch-updater/token
  keyFile: /etc/myriarch-updater/key
collector:
  supervisorState: /var/lib/opampsupervisor/persistent_state.yaml
  restartCommand: [systemctl, restart, opampsupervisor]
verify:
  minisignPublicKey: /etc/myriarch-updater/minisign.pub
allowedURLPrefixes: [https://mirror.example/otelcol/]
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig_Defaults(t *testing.T) {
	c, err := loadConfig(writeFile(t, t.TempDir(), "updater.yaml", minimalConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.StateDir != defaultStateDir || c.Collector.Root != "/opt/otelcol" || c.Collector.Binary != "otelcol-contrib" ||
		c.Collector.HealthURL != "http://127.0.0.1:13133/" || c.Collector.HealthTimeout != 60*time.Second || c.MaxArchiveBytes != 512<<20 {
		t.Errorf("defaults %+v", c)
	}
}

// Each broken key is named; an unknown key is refused, since a typo must
// not drop a host rule silently.
func TestLoadConfig_Refused(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{name: "unknown key", from: "allowedURLPrefixes:", to: "allowedUrlPrefixes:", want: "field allowedUrlPrefixes not found"},
		{name: "http endpoint", from: "ws://127.0.0.1", to: "http://127.0.0.1", want: "server.endpoint"},
		{name: "CA with ws", from: "  keyFile:", to: "  caFile: /ca.pem\n  keyFile:", want: "server.caFile"},
		{name: "no link", from: "  supervisorState: /var/lib/opampsupervisor/persistent_state.yaml\n", to: "", want: "exactly one of instanceUID and supervisorState"},
		{name: "two links", from: "  restartCommand:", to: "  instanceUID: 0190a6e2-8d3c-7b1e-9f00-1234567890ab\n  restartCommand:", want: "exactly one"},
		{name: "no restart", from: "  restartCommand: [systemctl, restart, opampsupervisor]\n", to: "", want: "collector.restartCommand"},
		{name: "no key", from: "  minisignPublicKey: /etc/myriarch-updater/minisign.pub\n", to: "", want: "verify.minisignPublicKey"},
		{name: "no prefixes", from: "allowedURLPrefixes: [https://mirror.example/otelcol/]", to: "allowedURLPrefixes: []", want: "at least one"},
		{name: "prefix without a slash", from: "https://mirror.example/otelcol/]", to: "https://mirror.example]", want: "ending in /"},
		{name: "binary with a path", from: "  restartCommand:", to: "  binary: ../bin/sh\n  restartCommand:", want: "collector.binary"},
		{name: "negative bound", from: "allowedURLPrefixes:", to: "maxArchiveBytes: -1\nallowedURLPrefixes:", want: "maxArchiveBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(minimalConfig, tt.from) {
				t.Fatalf("%q is not in the config", tt.from)
			}
			path := writeFile(t, t.TempDir(), "updater.yaml", strings.Replace(minimalConfig, tt.from, tt.to, 1))
			_, err := loadConfig(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestConfig_Secrets(t *testing.T) {
	dir := t.TempDir()
	var c Config
	c.Server.TokenFile = writeFile(t, dir, "token", "fleet-token\n")
	for _, tt := range []struct {
		key string
		ok  bool
	}{
		{key: strings.Repeat("a", 64) + "\n", ok: true},
		{key: strings.Repeat("a", 32), ok: true},
		{key: strings.Repeat("a", 31)},
		{key: strings.Repeat("a", 257)},
	} {
		c.Server.KeyFile = writeFile(t, dir, "key", tt.key)
		s, err := c.secrets()
		if (err == nil) != tt.ok {
			t.Errorf("key of %d characters: %v", len(tt.key), err)
		}
		if tt.ok && (s.token != "fleet-token" || strings.ContainsAny(s.key, "\n ")) {
			t.Errorf("secrets %q %q, want trimmed", s.token, s.key)
		}
	}
}

// The example in examples/updater is a configuration this program takes.
func TestLoadConfig_Example(t *testing.T) {
	c, err := loadConfig("../../examples/updater/updater.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Collector.SupervisorState == "" || len(c.Collector.VersionCommand) != 2 || c.Collector.HealthTimeout != 60*time.Second {
		t.Errorf("example read as %+v", c)
	}
}
