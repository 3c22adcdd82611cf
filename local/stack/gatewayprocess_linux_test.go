package stack

import (
	"bytes"
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

// A test binary started with envRole set is not a test run but one of the
// processes of TestGatewayProcess_StackKilled_GatewayGone (the usual re-exec
// of the test binary): "stack" starts a GatewayProcess and waits to be
// killed; "gateway" is that process, a stand-in for opamp-gateway that
// answers /healthz.
const (
	envRole   = "MYRIARCH_STACK_TEST_ROLE"
	envDir    = "MYRIARCH_STACK_TEST_DIR"    // stack: where it writes startedFile
	envHealth = "MYRIARCH_STACK_TEST_HEALTH" // gateway: its /healthz address
	// startedFile is "<gateway pid> <health host:port>".
	startedFile = "started"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "stack":
		os.Exit(helperStack(os.Getenv(envDir)))
	case "gateway":
		ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		fmt.Fprintln(os.Stderr, http.ListenAndServe(os.Getenv(envHealth), ok))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func helperStack(dir string) int {
	health, err := reserveAddr("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := &GatewayProcess{Binary: os.Args[0], Addr: "127.0.0.1:0", HealthAddr: health,
		Env: []string{envRole + "=gateway", envHealth + "=" + health}, Stderr: os.Stderr}
	if err := p.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp := filepath.Join(dir, startedFile+".tmp") // written whole, then renamed
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %s", p.PID(), health), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(dir, startedFile)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// kill -9 of the stack takes its gateway process with it: the gateway's
// port stops answering and its process is gone within seconds, so that a
// stack started again finds its gateway address free.
func TestGatewayProcess_StackKilled_GatewayGone(t *testing.T) {
	dir := t.TempDir()
	stack := exec.Command(os.Args[0], "-test.run=^$")
	stack.Env = append(os.Environ(), envRole+"=stack", envDir+"="+dir)
	logPath := filepath.Join(dir, "stack.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	stack.Stdout, stack.Stderr = logFile, logFile
	if err := stack.Start(); err != nil {
		t.Fatal(err)
	}
	pid, health := waitStarted(t, stack, dir, logPath)
	t.Cleanup(func() { // a failed test leaves no gateway behind
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	_ = stack.Process.Kill()
	_ = stack.Wait()
	const within = 5 * time.Second // the kernel signals it as the stack dies
	deadline := time.Now().Add(within)
	for answers(health) || !processGone(pid) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the gateway process (pid %d) still runs %s after the stack was killed (answers on %s: %v)\n%s",
				pid, within, health, answers(health), b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStarted reads the stack helper's startedFile once it is there.
func waitStarted(t *testing.T, stack *exec.Cmd, dir, logPath string) (pid int, health string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { _, err := stack.Process.Wait(); exited <- err }()
	deadline := time.After(time.Minute)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, startedFile)); err == nil {
			if _, err := fmt.Sscanf(string(b), "%d %s", &pid, &health); err != nil {
				t.Fatalf("%s: %q: %v", startedFile, b, err)
			}
			return pid, health
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the stack exited before its gateway ran: %v\n%s", err, b)
		case <-deadline:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the stack's gateway did not start\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// processGone reports whether pid names no process, or one that has exited
// and waits to be reaped (a zombie: an orphan's new parent may reap late,
// or never, as some container inits).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// "pid (command) state …"; the command may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
