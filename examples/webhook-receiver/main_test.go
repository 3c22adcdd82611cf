package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestParseAndSecret(t *testing.T) {
	env := map[string]string{"MYRIARCH_AGENT_TOKEN": "agents", "MYRIARCH_SECRET_EDGE_HOOK": "from-env"}
	getenv := func(k string) string { return env[k] }
	cfg, opts, err := parse([]string{"-listen", "127.0.0.1:0", "-n", "3", "-speed", "10"}, getenv, io.Discard)
	if err != nil || cfg.N != 3 || cfg.Speed != 10 || cfg.Token != "agents" || opts.listen != "127.0.0.1:0" {
		t.Fatalf("parse: %+v %+v %v", cfg, opts, err)
	}
	if s, err := readSecret(opts, getenv); err != nil || s != "from-env" {
		t.Fatalf("secret %q %v", s, err)
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.secretFile = file
	if s, err := readSecret(opts, getenv); err != nil || s != "from-file" {
		t.Fatalf("secret file: %q %v", s, err)
	}
	if _, err := readSecret(options{secretEnv: "NONE"}, getenv); err == nil {
		t.Fatal("no secret must be an error")
	}
}
