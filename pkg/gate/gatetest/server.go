// Package gatetest runs the real Prometheus and Alertmanager (Debian's
// packages prometheus and prometheus-alertmanager) for the integration tests
// of the gate readers: each server on a free loopback port, with its own
// configuration and data under the test's temporary directory, stopped when
// the test ends.
package gatetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const (
	startTries   = 3                // a free port can be taken between the probe and the start
	readyWithin  = 60 * time.Second // a first start on a slow CI machine replays an empty WAL, compiles…
	stopWithin   = 10 * time.Second
	pollInterval = 100 * time.Millisecond
	logTailBytes = 4 << 10
)

// server is a binary to run and how.
type server struct {
	binary, aptPackage string
	// args are the command line for a listen address and the server's own
	// directory (its configuration file is already there).
	args func(addr, dir string) []string
}

// requireBinary finds the server's binary. A missing one fails the test: the
// integration tests are part of the suite, in CI above all. Only an explicit
// unit-only run outside CI (MYRIARCH_UNIT_ONLY, `make unit`) skips them, as
// pkg/storetest does for DynamoDB Local.
func requireBinary(t testing.TB, binary, aptPackage string) string {
	t.Helper()
	path, err := exec.LookPath(binary)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
		t.Skipf("MYRIARCH_UNIT_ONLY: %s is not installed; the gate's integration tests run with make test", binary)
	}
	t.Fatalf("%s is not installed: the gate's integration tests run the real server; install it with `apt-get install %s`", binary, aptPackage)
	return ""
}

// start runs the server with the configuration and returns its base URL
// once /-/ready answers 200.
func (s server) start(t testing.TB, configName string, config []byte) string {
	t.Helper()
	path := requireBinary(t, s.binary, s.aptPackage)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, configName), config, 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range startTries {
		addr, err := freeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + addr
		err = s.run(t, path, addr, dir, url)
		if err == nil {
			return url
		}
		lastErr = err
	}
	t.Fatalf("%s did not start: %v", s.binary, lastErr)
	return ""
}

// run starts one process and waits for it to be ready; it registers the
// stop with the test. An error means the process is gone again.
func (s server) run(t testing.TB, path, addr, dir, url string) error {
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(path, s.args(addr, dir)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	if gone, err := waitReady(url, exited); err != nil {
		if !gone {
			_ = stop(cmd, exited)
		}
		return fmt.Errorf("%w\n--- %s\n%s", err, logPath, tail(logPath))
	}
	t.Cleanup(func() {
		if err := stop(cmd, exited); err != nil {
			t.Logf("stop %s: %v", s.binary, err)
		}
	})
	return nil
}

// waitReady polls /-/ready until it answers 200, the process exits or
// readyWithin passes. It reports whether the process exited (its exit is
// then consumed from the channel).
func waitReady(url string, exited <-chan error) (gone bool, err error) {
	client := &http.Client{Timeout: time.Second}
	var exitErr error
	err = poll(context.Background(), readyWithin, func() (bool, error) {
		select {
		case exitErr = <-exited:
			gone = true
			return true, nil
		default:
		}
		resp, err := client.Get(url + "/-/ready")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("/-/ready: status %d", resp.StatusCode)
	})
	if gone {
		return true, fmt.Errorf("exited before it was ready: %v", exitErr)
	}
	return false, err
}

// stop asks the process to end (SIGTERM: both servers flush and exit) and
// kills it when it does not within stopWithin.
func stop(cmd *exec.Cmd, exited <-chan error) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(stopWithin)
	defer timer.Stop()
	select {
	case <-exited:
		return nil
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("killed: no exit within %s of SIGTERM", stopWithin)
	}
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	return string(b)
}

// poll calls f every pollInterval until it reports done, the context ends
// or within passes; it returns f's last error.
func poll(ctx context.Context, within time.Duration, f func() (done bool, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		done, err := f()
		if done {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("not within %s", within), last)
		case <-tick.C:
		}
	}
}
