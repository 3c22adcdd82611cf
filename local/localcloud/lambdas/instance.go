package lambdas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// instance is one execution environment: an RIE process that runs the
// function's bootstrap and serves one invocation at a time.
type instance struct {
	cmd    *exec.Cmd
	url    string        // RIE's invocation endpoint
	exited chan struct{} // closed when the process has ended
	client *http.Client
}

// rieInvokePath is the one path RIE serves, whatever the function's name.
const rieInvokePath = "/2015-03-31/functions/function/invocations"

// startInstance starts RIE on two free loopback ports of its own (its
// invocation endpoint and the Runtime API it gives the bootstrap, which
// would otherwise be 127.0.0.1:9001 for every instance) and waits until it
// accepts connections. A port taken between choosing and binding makes
// RIE exit: it is tried again on other ports.
func startInstance(rie string, fn Function, env []string, out io.Writer) (*instance, error) {
	var last error
	for range 3 {
		inst, err := tryStart(rie, fn, env, out)
		if err == nil {
			return inst, nil
		}
		last = err
	}
	return nil, fmt.Errorf("start %s under RIE: %w", fn.Name, last)
}

func tryStart(rie string, fn Function, env []string, out io.Writer) (*instance, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(rie,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		fn.Bootstrap)
	// Lambda runs the bootstrap in the code's directory (/var/task).
	cmd.Dir = filepath.Dir(fn.Bootstrap)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inst := &instance{cmd: cmd, url: "http://" + addr + rieInvokePath, exited: make(chan struct{}), client: &http.Client{}}
	go func() { _ = cmd.Wait(); close(inst.exited) }()
	if err := inst.awaitListening(addr, 10*time.Second); err != nil {
		inst.stop()
		return nil, err
	}
	return inst, nil
}

func (i *instance) awaitListening(addr string, limit time.Duration) error {
	deadline := time.After(limit) // a bound on a process's start, not a decision: no clock read
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case <-i.exited:
			return fmt.Errorf("RIE exited before listening on %s", addr)
		case <-deadline:
			return fmt.Errorf("RIE did not listen on %s within %s", addr, limit)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// rieReply is RIE's answer to one invocation.
type rieReply struct {
	status int
	body   []byte
}

// invoke posts one event; ctx bounds the wait (the function's timeout and
// a grace period, in case RIE does not report the timeout itself).
func (i *instance) invoke(ctx context.Context, requestID string, payload []byte) (rieReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, i.url, bytes.NewReader(payload))
	if err != nil {
		return rieReply{}, err
	}
	req.Header.Set("X-Amzn-RequestId", requestID)
	resp, err := i.client.Do(req)
	if err != nil {
		return rieReply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return rieReply{status: resp.StatusCode, body: body}, err
}

// alive says whether the process still runs (an idle instance may have
// died; it is then replaced rather than used).
func (i *instance) alive() bool {
	select {
	case <-i.exited:
		return false
	default:
		return true
	}
}

// stop kills RIE and the bootstrap it started (its process group), and
// waits for RIE to end.
func (i *instance) stop() {
	killGroup(i.cmd.Process)
	<-i.exited
}

// environ is an instance's whole environment, nothing inherited from this
// process: the cloud's base, the function's variables, then the variables
// Lambda reserves, which neither may override. PATH is not passed: RIE
// starts the bootstrap by its absolute path and needs no lookup.
func environ(base map[string]string, fn Function) []string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range fn.Env {
		m[k] = v
	}
	for k, v := range reserved(fn, base) {
		m[k] = v
	}
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// reserved are the variables Lambda sets in every execution environment
// that the functions or RIE read: RIE takes the timeout and memory size
// from them.
func reserved(fn Function, base map[string]string) map[string]string {
	r := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        fn.Name,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": fmt.Sprint(fn.MemoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     fmt.Sprint(timeoutSeconds(fn.Timeout)),
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + fn.Name,
		"AWS_ACCESS_KEY_ID":               fn.RoleLogicalID,
		"LAMBDA_TASK_ROOT":                filepath.Dir(fn.Bootstrap),
		"_HANDLER":                        "bootstrap",
		"TZ":                              ":UTC",
	}
	if region, ok := base["AWS_REGION"]; ok {
		r["AWS_DEFAULT_REGION"] = region
	}
	return r
}

// timeoutSeconds is the timeout as RIE reads it, in whole seconds (as
// Lambda's Timeout is), at least 1.
func timeoutSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

var errStopped = errors.New("lambdas: the runtime is closed")
