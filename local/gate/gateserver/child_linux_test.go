package gateserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// goneWithin bounds how long a child may outlive its parent killed with
// SIGKILL: the kernel signals it as the parent dies, so a second is ample.
const goneWithin = 5 * time.Second

// The child dies with the process, not with the thread that asked for it:
// a caller locked to its thread that returns without unlocking ends that
// thread (the Go runtime's rule), and the child runs on. Three callers: the
// runtime never ends the main thread but parks it, and one of them may have
// run there.
func TestStartWithParent_CallersThreadEnds_ChildRunsOn(t *testing.T) {
	for i := range 3 {
		cmd := exec.Command("sleep", "60")
		type result struct {
			exited <-chan error
			err    error
		}
		started := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			exited, err := StartWithParent(cmd)
			started <- result{exited, err}
		}()
		r := <-started
		if r.err != nil {
			t.Fatal(r.err)
		}
		select {
		case err := <-r.exited:
			t.Fatalf("child %d ended with the thread that started it: %v", i, err)
		case <-time.After(time.Second):
		}
		_ = cmd.Process.Kill()
		<-r.exited
	}
}

// kill -9 of the process that started a server through this package (the
// local stack) takes the server with it: its port stops answering and its
// process is gone within goneWithin.
func TestServer_ParentKilled_ServerGone(t *testing.T) {
	for _, name := range []string{"alertmanager", "prometheus"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), envHelper+"="+name, envHelperDir+"="+dir)
			logPath := filepath.Join(dir, "helper.log")
			log, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			parent.Stdout, parent.Stderr = log, log
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			pid, addr := waitStarted(t, parent, dir, logPath)
			t.Cleanup(func() { // a failed test leaves no server behind
				if !processGone(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if !answers(addr) {
				t.Fatalf("%s (pid %d) does not answer on %s", name, pid, addr)
			}

			_ = parent.Process.Kill()
			_ = parent.Wait()
			deadline := time.Now().Add(goneWithin)
			for answers(addr) || !processGone(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("%s (pid %d) still runs %s after its parent was killed (answers on %s: %v)",
						name, pid, goneWithin, addr, answers(addr))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// waitStarted waits for the helper's startedFile: the server's pid and
// host:port.
func waitStarted(t *testing.T, parent *exec.Cmd, dir, logPath string) (pid int, addr string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { _, err := parent.Process.Wait(); exited <- err }()
	deadline := time.After(readyWithin + 10*time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, startedFile)); err == nil {
			var raw string
			if _, err := fmt.Sscanf(string(b), "%d %s", &pid, &raw); err != nil {
				t.Fatalf("%s: %q: %v", startedFile, b, err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			return pid, u.Host
		}
		select {
		case err := <-exited:
			t.Fatalf("the helper exited before its server ran: %v\n%s", err, tail(logPath))
		case <-deadline:
			t.Fatalf("the helper's server did not start\n%s", tail(logPath))
		case <-time.After(pollInterval):
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
