//go:build unix

package lambdas

import (
	"os"
	"syscall"
)

// procAttr puts RIE in a process group of its own, so that stopping it
// also stops the bootstrap it started.
func procAttr() *syscall.SysProcAttr { return withParentDeath(&syscall.SysProcAttr{Setpgid: true}) }

func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
