package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/adapters/updater"
)

// Config is the updater's configuration file (docs/updater.md has the
// reference; examples/updater/updater.yaml an example).
type Config struct {
	Server struct {
		Endpoint  string `yaml:"endpoint"`  // ws:// or wss:// URL of the gateway's OpAMP endpoint
		TokenFile string `yaml:"tokenFile"` // the fleet's agent token
		KeyFile   string `yaml:"keyFile"`   // this host's own key, 32 to 256 characters
		CAFile    string `yaml:"caFile"`    // optional: the CA of the gateway's certificate
	} `yaml:"server"`
	StateDir  string `yaml:"stateDir"`
	Collector struct {
		Root            string        `yaml:"root"`
		Binary          string        `yaml:"binary"`
		InstanceUID     string        `yaml:"instanceUID"`     // the collector's OpAMP instance UID, or
		SupervisorState string        `yaml:"supervisorState"` // the supervisor's persistent_state.yaml holding it
		RestartCommand  []string      `yaml:"restartCommand"`
		HealthURL       string        `yaml:"healthURL"`
		HealthTimeout   time.Duration `yaml:"healthTimeout"`
		VersionCommand  []string      `yaml:"versionCommand"`
	} `yaml:"collector"`
	Verify struct {
		MinisignPublicKey string `yaml:"minisignPublicKey"` // the one-line key, or a .pub file
	} `yaml:"verify"`
	AllowedURLPrefixes []string `yaml:"allowedURLPrefixes"`
	MaxArchiveBytes    int64    `yaml:"maxArchiveBytes"`
}

// Defaults of the optional keys.
const (
	defaultStateDir      = "/var/lib/myriarch-updater"
	defaultRoot          = "/opt/otelcol"
	defaultBinary        = "otelcol-contrib"
	defaultHealthURL     = "http://127.0.0.1:13133/"
	defaultHealthTimeout = 60 * time.Second
)

// loadConfig reads the file strictly (an unknown key is an error: a typo
// must not silently drop a host rule), fills the defaults and checks it.
func loadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	c.defaults()
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

func (c *Config) defaults() {
	set := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	set(&c.StateDir, defaultStateDir)
	set(&c.Collector.Root, defaultRoot)
	set(&c.Collector.Binary, defaultBinary)
	set(&c.Collector.HealthURL, defaultHealthURL)
	if c.Collector.HealthTimeout == 0 {
		c.Collector.HealthTimeout = defaultHealthTimeout
	}
	if c.MaxArchiveBytes == 0 {
		c.MaxArchiveBytes = updater.DefaultMaxArchiveBytes
	}
}

func (c *Config) validate() error {
	var errs []error
	need := func(ok bool, msg string) {
		if !ok {
			errs = append(errs, errors.New(msg))
		}
	}
	u, err := url.Parse(c.Server.Endpoint)
	need(err == nil && (u.Scheme == "ws" || u.Scheme == "wss") && u.Host != "", "server.endpoint: a ws:// or wss:// URL is required")
	need(c.Server.CAFile == "" || strings.HasPrefix(c.Server.Endpoint, "wss://"), "server.caFile: only with a wss:// endpoint")
	need(c.Server.TokenFile != "", "server.tokenFile is required")
	need(c.Server.KeyFile != "", "server.keyFile is required")
	need((c.Collector.InstanceUID == "") != (c.Collector.SupervisorState == ""),
		"collector: exactly one of instanceUID and supervisorState is required (the link to the collector)")
	need(len(c.Collector.RestartCommand) > 0, "collector.restartCommand is required")
	need(!strings.ContainsAny(c.Collector.Binary, `/\`) && c.Collector.Binary != ".." && c.Collector.Binary != ".", "collector.binary: a file name")
	h, err := url.Parse(c.Collector.HealthURL)
	need(err == nil && (h.Scheme == "http" || h.Scheme == "https"), "collector.healthURL: an http(s) URL")
	need(c.Collector.HealthTimeout > 0, "collector.healthTimeout must be positive")
	need(c.Verify.MinisignPublicKey != "", "verify.minisignPublicKey is required")
	need(c.MaxArchiveBytes > 0, "maxArchiveBytes must be positive")
	need(len(c.AllowedURLPrefixes) > 0, "allowedURLPrefixes: at least one is required")
	for _, p := range c.AllowedURLPrefixes {
		need(validPrefix(p), fmt.Sprintf("allowedURLPrefixes: %q must be an http(s) URL with a host, ending in /", p))
	}
	return errors.Join(errs...)
}

// validPrefix: an http(s) URL with a host, ending in "/", so that
// "https://mirror.example" cannot also allow "https://mirror.example.evil/".
func validPrefix(p string) bool {
	u, err := url.Parse(p)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && strings.HasSuffix(p, "/")
}

// secrets are the token and the key, read once at start.
type secrets struct{ token, key string }

// Bounds of the host's key, as the gateway takes it.
const (
	minKeyChars = 32
	maxKeyChars = 256
)

func (c Config) secrets() (secrets, error) {
	token, err := os.ReadFile(c.Server.TokenFile)
	if err != nil {
		return secrets{}, fmt.Errorf("server.tokenFile: %w", err)
	}
	key, err := os.ReadFile(c.Server.KeyFile)
	if err != nil {
		return secrets{}, fmt.Errorf("server.keyFile: %w", err)
	}
	s := secrets{token: strings.TrimSpace(string(token)), key: strings.TrimSpace(string(key))}
	if s.token == "" {
		return s, errors.New("server.tokenFile: empty")
	}
	if n := len(s.key); n < minKeyChars || n > maxKeyChars {
		return s, fmt.Errorf("server.keyFile: a key of %d characters, want %d to %d (openssl rand -hex 32)", n, minKeyChars, maxKeyChars)
	}
	return s, nil
}
