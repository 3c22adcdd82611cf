package lambdas

import "syscall"

// withParentDeath has the kernel kill RIE when the local cloud dies
// without closing the runtime, so that no instance outlives it.
func withParentDeath(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Pdeathsig = syscall.SIGKILL
	return a
}
