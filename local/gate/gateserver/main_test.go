package gateserver

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A test binary started with envHelper set is not a test run: it is the
// parent that a test kills, which starts a server through this package
// (the usual re-exec of the test binary, as os/exec's tests do).
const (
	envHelper    = "MYRIARCH_GATESERVER_HELPER"     // "alertmanager" or "prometheus"
	envHelperDir = "MYRIARCH_GATESERVER_HELPER_DIR" // the server's directory; the helper writes startedFile there
	startedFile  = "started"                        // "<server pid> <server URL>"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(envHelper); name != "" {
		os.Exit(helper(name, os.Getenv(envHelperDir)))
	}
	os.Exit(m.Run())
}

// helper starts the server, says where it runs and waits to be killed.
func helper(name, dir string) int {
	start := map[string]func() (*Process, error){
		"alertmanager": func() (*Process, error) { return StartAlertmanager(dir) },
		"prometheus":   func() (*Process, error) { return StartPrometheus(dir, []string{"127.0.0.1:1"}, time.Second) },
	}[name]
	if start == nil {
		fmt.Fprintln(os.Stderr, "unknown server", name)
		return 2
	}
	p, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Written whole, then renamed: the test never reads half of it.
	tmp := filepath.Join(dir, startedFile+".tmp")
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %s", p.cmd.Process.Pid, p.URL), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(dir, startedFile)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}
