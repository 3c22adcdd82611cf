package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// With -together each fleet runs in a process of its own (this program
// again, -role fleet): two fleets of 10,000 hold 20,000 sockets, the
// open-file limit of many machines for one process, and each server then
// answers a process of the same kind (a write on loopback wakes its
// reader, and what that costs depends on the reader's process). The wave,
// which needs the fleet here, is left out.

// serveFleet is -role fleet: it connects n agents to url, prints
// "connected <seconds>" and keeps them until its standard input closes.
func serveFleet(url string, n int, heartbeat, spread time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, took, err := startFleet(ctx, url, n, heartbeat, spread)
	cancel()
	defer f.stop()
	if err != nil {
		return err
	}
	fmt.Printf("connected %f\n", took.Seconds())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// fleetProc is a fleet of -role fleet.
type fleetProc struct {
	cmd   *exec.Cmd
	stdin io.Closer
}

// startFleetProc starts a fleet process and waits until its agents are
// connected.
func startFleetProc(o options, url string, n int) (*fleetProc, time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(self, "-role", "fleet", "-url", url, "-n", fmt.Sprint(n),
		"-heartbeat", o.heartbeat.String(), "-spread", o.spread.String())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	p := &fleetProc{cmd: cmd, stdin: in}
	line, err := bufio.NewReader(out).ReadString('\n')
	var secs float64
	if _, scanErr := fmt.Sscanf(strings.TrimSpace(line), "connected %f", &secs); err != nil || scanErr != nil {
		p.stop()
		return nil, 0, fmt.Errorf("fleet process: %q, %v", line, err)
	}
	return p, time.Duration(secs * float64(time.Second)), nil
}

func (p *fleetProc) stop() {
	_ = p.stdin.Close()
	awaitExit(p.cmd)
}
