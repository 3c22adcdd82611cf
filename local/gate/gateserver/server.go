// Package gateserver runs the real Prometheus and Alertmanager (Debian's
// packages prometheus and prometheus-alertmanager) on free loopback ports,
// each with its own configuration and data directory: for the gate's
// integration tests (local/gate/gatetest) and for the local demo, whose gate
// reads the simulated collectors' pipeline metrics. On Linux a server ends
// with the process that started it, even one killed with SIGKILL
// (StartWithParent).
package gateserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
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
	// addr, if set, is the one address to listen on (a template names
	// it); empty: a free loopback port, tried again if taken meanwhile.
	addr string
}

// start runs the server with the configuration in dir and returns the
// process once /-/ready answers 200.
func (s server) start(dir, configName string, config []byte) (*Process, error) {
	path, err := Binary(s.binary, s.aptPackage)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, configName), config, 0o600); err != nil {
		return nil, err
	}
	if s.addr != "" {
		return s.run(path, s.addr, dir, "http://"+s.addr)
	}
	var lastErr error
	for range startTries {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		p, err := s.run(path, addr, dir, "http://"+addr)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%s did not start: %w", s.binary, lastErr)
}

// run starts one process and waits for it to be ready. An error means the
// process is gone again.
func (s server) run(path, addr, dir, url string) (*Process, error) {
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(path, s.args(addr, dir)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logFile, logFile
	exited, err := StartWithParent(cmd) // a killed stack leaves no server listening
	if err != nil {
		return nil, err
	}
	if gone, err := waitReady(url, exited); err != nil {
		if !gone {
			_ = stop(cmd, exited)
		}
		return nil, fmt.Errorf("%w\n--- %s\n%s", err, logPath, tail(logPath))
	}
	return &Process{URL: url, Name: s.binary, cmd: cmd, exited: exited}, nil
}

// Process is a running server.
type Process struct {
	URL    string // http://127.0.0.1:<port>
	Name   string
	cmd    *exec.Cmd
	once   sync.Once
	err    error
	exited <-chan error
}

// Stop ends the server (SIGTERM, then a kill); it may be called again.
func (p *Process) Stop() error {
	p.once.Do(func() { p.err = stop(p.cmd, p.exited) })
	return p.err
}

// NotInstalledError says that a server's binary is missing, and which
// Debian package has it.
type NotInstalledError struct{ Binary, Package string }

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s is not installed; install it with `apt-get install %s` (make test and make demo do, as root)", e.Binary, e.Package)
}

// Binary finds a server's binary on PATH.
func Binary(binary, aptPackage string) (string, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return "", &NotInstalledError{Binary: binary, Package: aptPackage}
	}
	return path, nil
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
