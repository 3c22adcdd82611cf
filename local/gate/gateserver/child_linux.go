package gateserver

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startTied starts cmd with a parent-death signal: the kernel sends the
// child SIGKILL when its parent dies. "Parent" is the thread that forked it,
// not the process (prctl(2), PR_SET_PDEATHSIG; go.dev/issue/27505), and Go
// runs goroutines on any thread and ends a thread whose goroutine returns
// while locked to it. So the child is started by a goroutine locked to its
// thread, which keeps that thread until the child has exited: the thread
// then ends only with the process. One thread per child: the stack runs
// three at most.
//
// The child runs in a process group of its own, so that a Ctrl-C, which
// the terminal sends to the whole foreground group, reaches only the
// parent: the parent stops its children in its own order (the local stack
// stops its Prometheus and Alertmanager after what reads them).
func startTied(cmd *exec.Cmd) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // the child is gone: the thread may serve others
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}
