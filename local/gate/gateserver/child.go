package gateserver

import "os/exec"

// StartWithParent starts cmd as a child that ends with this process, even
// when this process is killed with SIGKILL and runs no code on its way out:
// a local stack killed with kill -9 must not leave servers listening on its
// ports. The channel receives cmd.Wait's result once the child has exited;
// the caller must not call cmd.Wait itself.
//
// On Linux the child gets SIGKILL when its parent dies (see startTied); on
// other systems it is started as is, and outlives a killed parent.
func StartWithParent(cmd *exec.Cmd) (exited <-chan error, err error) {
	return startTied(cmd)
}
