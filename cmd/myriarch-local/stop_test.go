package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A Ctrl-C stops make run in order, a line for each part as it stops: the
// simulated fleet, the gateway, the API, the functions, then the stores;
// nothing retries on a store that is gone. SIGTERM, which make passes on
// to the script, stops it the same way. Ctrl-C is sent as a terminal does:
// to every process of the group, DynamoDB Local's included.
func TestRun_StopsInOrder(t *testing.T) {
	if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
		t.Skip("MYRIARCH_UNIT_ONLY: runs the stack under DynamoDB Local")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildLocal(t)
	want := []string{"Stopping.", "  Simulated fleet   stopped (3 collectors)", "  OpAMP gateway     stopped", "  REST API          stopped",
		"  Step Functions    stopped (with the Lambdas, the schedules and the stream delivery)"}
	// The stack starts the gate servers that are installed (make test installs both).
	for _, s := range []struct{ part, binary string }{{"Prometheus", "prometheus"}, {"Alertmanager", "prometheus-alertmanager"}} {
		if _, err := exec.LookPath(s.binary); err == nil {
			want = append(want, "  "+s.part+strings.Repeat(" ", 18-len(s.part))+"stopped")
		}
	}
	want = append(want, "  DynamoDB Local    stopped")
	for _, c := range []struct {
		name  string
		group bool // the signal goes to the whole process group, as a terminal's Ctrl-C
		sig   syscall.Signal
	}{
		{name: "Ctrl-C", group: true, sig: syscall.SIGINT},
		{name: "SIGTERM", sig: syscall.SIGTERM},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts/with-dynamodb-local.sh"), bin, "run", "-agents", "3",
				"-api", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-sfn", "127.0.0.1:0", "-metrics-target", freePort(t))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), envData+"=", "DYNAMODB_LOCAL_REPORT_CPU=") // make test asks for the emulator's CPU; a user's run does not
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.WaitDelay = 10 * time.Second
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
			lines := bufio.NewScanner(out)
			for lines.Scan() && !strings.HasPrefix(lines.Text(), "Running;") {
			}
			before := stderr.Len()
			target := cmd.Process.Pid
			if c.group {
				target = -target
			}
			start := time.Now()
			if err := syscall.Kill(target, c.sig); err != nil {
				t.Fatal(err)
			}
			var got []string
			for lines.Scan() {
				if strings.TrimSpace(lines.Text()) != "" {
					got = append(got, lines.Text())
				}
			}
			err = cmd.Wait()
			took := time.Since(start)
			if err != nil {
				t.Errorf("exit: %v\nstderr:\n%s", err, stderr.String())
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("after %s the stack printed:\n%s\nwant:\n%s", c.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if tail := stderr.String()[before:]; strings.TrimSpace(tail) != "" {
				t.Errorf("while it stopped, the stack logged:\n%s", tail)
			}
			// The README's figure is measured, not asserted; this only
			// catches a stop that waits out a timeout.
			if took > 10*time.Second {
				t.Errorf("stopping took %s", took)
			}
		})
	}
}

var built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// buildLocal builds this command once for the tests that run it as make
// does, as a binary.
func buildLocal(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "myriarch-local-test-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "myriarch-local")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
