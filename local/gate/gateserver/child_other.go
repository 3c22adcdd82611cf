//go:build !linux

package gateserver

import "os/exec"

// startTied starts cmd as is: no parent-death signal outside Linux, so a
// child outlives a parent killed with SIGKILL (a stopped parent still stops
// its children).
func startTied(cmd *exec.Cmd) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}
