//go:build unix && !linux

package lambdas

import "syscall"

// withParentDeath: only Linux offers a parent-death signal; RIE itself
// runs on Linux only.
func withParentDeath(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
