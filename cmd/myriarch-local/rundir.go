package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The stack's temporary folders carry the pid of the run that made them
// (ownerFile), so that the next run can tell a folder whose run is gone (it
// was killed with SIGKILL and removed nothing) from a live run's, and
// remove only the former.
const ownerFile = "owner.pid"

// makeRunDir creates a folder in the temporary directory whose name starts
// with prefix, and writes this process's pid in it.
func makeRunDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	owner := strconv.Itoa(os.Getpid()) + "\n"
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeStaleRunDirs removes the folders of the temporary directory whose
// name starts with prefix and whose owner is gone. It keeps a folder with
// no readable owner: another run may be making it this instant, an older
// stack wrote none, or it is another user's. A folder that cannot be removed
// is reported, and the start goes on.
func removeStaleRunDirs(prefix string, stderr io.Writer) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		fmt.Fprintf(stderr, "myriarch-local: looking for the folders of earlier runs: %v\n", err)
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) { // IsDir: a symbolic link is not followed
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if pid, ok := owner(dir); !ok || running(pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(stderr, "myriarch-local: removing %s, left by an earlier run: %v\n", dir, err)
		}
	}
}

// owner is the pid in dir's ownerFile; ok is false without one.
func owner(dir string) (pid int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// running reports whether a process has the pid: signal 0 checks without
// sending anything, and EPERM means that it exists (another user's). A pid
// that a new process took since is taken for the owner: the folder stays,
// which is the safe side.
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
