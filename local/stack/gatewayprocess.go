package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// GatewayProcess is the OpAMP gateway run as its own process (the real
// opamp-gateway binary, as in a Fargate task), so that it can be killed and
// started again while the rest of the stack runs on. It listens on a fixed
// address: agents reconnect to the same URL when it comes back.
type GatewayProcess struct {
	Binary     string
	Addr       string // OpAMP, host:port
	HealthAddr string // /healthz, host:port
	// Env are the variables the gateway needs besides the parent's
	// environment (which it inherits): table prefix, agent token, DynamoDB
	// endpoint, and no instance metadata.
	Env    []string
	Args   []string
	Stderr io.Writer

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Command is the command line that starts another gateway like this one,
// for a shell: the variables, then the binary with its flags. Another one
// next to this needs other addresses (-listen, -health-listen).
func (p *GatewayProcess) Command() string {
	return strings.Join(append(append(append([]string(nil), p.Env...), p.Binary), p.Args...), " ")
}

// PID is the running process's id, 0 when none runs.
func (p *GatewayProcess) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *GatewayProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start starts the process unless it runs, and waits until its /healthz
// answers 200 (it reached the store) or ctx ends.
func (p *GatewayProcess) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.cmd != nil && !p.exited() {
		p.mu.Unlock()
		return nil
	}
	cmd := exec.Command(p.Binary, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = p.Stderr, p.Stderr
	// It dies with the stack, even with a stack killed with SIGKILL: no
	// gateway of a stack that is gone holds the address.
	exited, err := gateserver.StartWithParent(cmd)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start the gateway process %s: %w", p.Binary, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	go func() { <-exited; close(done) }()
	return p.waitHealthy(ctx, done)
}

func (p *GatewayProcess) waitHealthy(ctx context.Context, done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := "http://" + p.HealthAddr + "/healthz"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("the gateway process exited before it was healthy (%s)", p.Command())
		case <-ctx.Done():
			return fmt.Errorf("the gateway process was not healthy at %s: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Kill kills the process with SIGKILL, as a task dies, and waits for it:
// it writes nothing on its way out, its agents stay online in the store
// until they reconnect or fall silent.
func (p *GatewayProcess) Kill() error {
	return p.signal(syscall.SIGKILL, 0)
}

// Stop stops the process with SIGTERM (it drains: its agents reconnect
// elsewhere), and kills it after wait.
func (p *GatewayProcess) Stop(wait time.Duration) error {
	return p.signal(syscall.SIGTERM, wait)
}

func (p *GatewayProcess) signal(sig syscall.Signal, wait time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if sig != syscall.SIGKILL {
		select {
		case <-done:
			return nil
		case <-time.After(wait):
			_ = cmd.Process.Kill()
		}
	}
	<-done
	return nil
}

// reserveAddr checks that addr is free and picks a port for ":0", for an
// address the process must keep across restarts ("127.0.0.1:0" would
// change with each).
func reserveAddr(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
