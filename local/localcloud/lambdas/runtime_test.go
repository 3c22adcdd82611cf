package lambdas

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fnReply is what testdata/fn answers.
type fnReply struct {
	PID  int               `json:"pid"`
	Env  map[string]string `json:"env"`
	Data string            `json:"data"`
}

func testFunction(t *testing.T, name string) Function {
	return Function{
		LogicalID: "Fn" + name, Name: name, ARN: "arn:aws:lambda:us-east-1:123456789012:function:" + name,
		RoleLogicalID: "RoleTest", Bootstrap: testBootstrap(t), Timeout: 3 * time.Second, MemoryMB: 256,
		ReservedConcurrency: -1, Env: map[string]string{"GREETING": "hello"},
	}
}

// newRuntime is a runtime with the given functions, its logs in a
// directory of the test's own, and asynchronous retries in milliseconds.
func newRuntime(t *testing.T, maxInstances int, fns ...Function) *Runtime {
	t.Helper()
	r := &Runtime{
		RIE:          rieBinary(t),
		BaseEnv:      map[string]string{"AWS_REGION": "us-east-1", "AWS_SECRET_ACCESS_KEY": "local", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"},
		MaxInstances: maxInstances,
		LogDir:       t.TempDir(),
		Delays: Delays{
			AfterError:    func(int) time.Duration { return 10 * time.Millisecond },
			AfterThrottle: func(int) time.Duration { return 10 * time.Millisecond },
		},
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, fn := range fns {
		if err := r.Add(fn); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func invoke(t *testing.T, r *Runtime, name string, event string) (Result, fnReply) {
	t.Helper()
	res, err := r.Invoke(context.Background(), name, []byte(event))
	if err != nil {
		t.Fatalf("invoke %s %s: %v", name, event, err)
	}
	var reply fnReply
	if !res.Failed() {
		if err := json.Unmarshal(res.Payload, &reply); err != nil {
			t.Fatalf("reply %.200q: %v", res.Payload, err)
		}
	}
	return res, reply
}

// The function sees the cloud's variables, its own, and Lambda's reserved
// ones (its role as access key id) — nothing of this process — and a warm
// instance serves the next invocation.
func TestInvoke_EnvironmentAndWarmStart(t *testing.T) {
	t.Setenv("MYRIARCH_LEAK", "from the parent")
	fn := testFunction(t, "env")
	fn.Env["AWS_ACCESS_KEY_ID"] = "overridden" // reserved: Lambda's value wins
	r := newRuntime(t, 4, fn)
	event := `{"env":["GREETING","AWS_REGION","AWS_SECRET_ACCESS_KEY","AWS_ENDPOINT_URL","AWS_ACCESS_KEY_ID",
		"AWS_LAMBDA_FUNCTION_NAME","AWS_LAMBDA_FUNCTION_MEMORY_SIZE","AWS_DEFAULT_REGION","MYRIARCH_LEAK","PATH","HOME"]}`
	res, first := invoke(t, r, fn.ARN, event)
	if res.Failed() || res.RequestID == "" {
		t.Fatalf("result %+v", res)
	}
	want := map[string]string{
		"GREETING": "hello", "AWS_REGION": "us-east-1", "AWS_SECRET_ACCESS_KEY": "local", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
		"AWS_ACCESS_KEY_ID": "RoleTest", "AWS_LAMBDA_FUNCTION_NAME": "env", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "AWS_DEFAULT_REGION": "us-east-1",
	}
	for k, v := range want {
		if first.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, first.Env[k], v)
		}
	}
	for _, k := range []string{"MYRIARCH_LEAK", "PATH", "HOME"} {
		if v, ok := first.Env[k]; ok {
			t.Errorf("%s = %q inherited from the parent process", k, v)
		}
	}
	_, second := invoke(t, r, "env", `{}`)
	if second.PID != first.PID {
		t.Errorf("second invocation in process %d, first in %d: want the warm instance", second.PID, first.PID)
	}
	log, _ := os.ReadFile(filepath.Join(r.LogDir, "env.log"))
	if n := strings.Count(string(log), "START RequestId: "+res.RequestID); n != 1 {
		t.Errorf("the function's log names request %s %d times, want once:\n%s", res.RequestID, n, log)
	}
}

// A returned error is a function error with its Go type as errorType; a
// crash is Runtime.ExitError; the function keeps working afterwards.
func TestInvoke_FunctionErrors(t *testing.T) {
	r := newRuntime(t, 4, testFunction(t, "errors"))
	res, _ := invoke(t, r, "errors", `{"op":"fail"}`)
	if res.FunctionError != "Unhandled" || res.ErrorType != "errBoom" || res.ErrorMessage != "boom" {
		t.Errorf("function error: %+v", res)
	}
	var body functionError
	if json.Unmarshal(res.Payload, &body); body.Type != "errBoom" {
		t.Errorf("payload %s, want the error JSON", res.Payload)
	}
	res, _ = invoke(t, r, "errors", `{"op":"exit"}`)
	if res.FunctionError != "Unhandled" || res.ErrorType != "Runtime.ExitError" {
		t.Errorf("crash: %+v", res)
	}
	if res, _ = invoke(t, r, "errors", `{}`); res.Failed() {
		t.Errorf("after the failures: %+v", res)
	}
}

// A function whose init fails reports Runtime.ExitError on each
// invocation, with a fresh instance each time.
func TestInvoke_InitFailure(t *testing.T) {
	fn := testFunction(t, "broken")
	fn.Env["FN_FAIL_INIT"] = "1"
	r := newRuntime(t, 4, fn)
	for range 2 {
		res, _ := invoke(t, r, "broken", `{}`)
		if res.FunctionError != "Unhandled" || res.ErrorType != "Runtime.ExitError" {
			t.Errorf("init failure: %+v", res)
		}
	}
}

// A timeout is Sandbox.Timedout, and the instance is killed and replaced
// by a new one, as Lambda resets the execution environment. The function
// would sleep 20 s: an answer within 10 s came from the 1 s timeout, with
// room for a machine busy with the rest of make test (3.2 s once, beside
// it, against a bound of 3 s).
func TestInvoke_TimeoutReplacesTheInstance(t *testing.T) {
	fn := testFunction(t, "slow")
	fn.Timeout = time.Second
	r := newRuntime(t, 4, fn)
	invoke(t, r, "slow", `{}`)
	old := onlyInstance(t, r, "slow")
	start := time.Now()
	res, _ := invoke(t, r, "slow", `{"op":"sleep","sleepMs":20000}`)
	if res.FunctionError != "Unhandled" || res.ErrorType != "Sandbox.Timedout" ||
		res.ErrorMessage != "RequestId: "+res.RequestID+" Error: Task timed out after 1.00 seconds" {
		t.Errorf("timeout: %+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %s to report", d)
	}
	if err := syscall.Kill(old, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the timed-out instance's RIE (pid %d) still exists: %v", old, err)
	}
	if res, _ = invoke(t, r, "slow", `{}`); res.Failed() {
		t.Fatalf("after the timeout: %+v", res)
	}
	if now := onlyInstance(t, r, "slow"); now == old {
		t.Errorf("the instance after the timeout is the old one (pid %d)", old)
	}
}

// onlyInstance is the RIE process id of a function's one idle instance.
func onlyInstance(t *testing.T, r *Runtime, name string) int {
	t.Helper()
	p := r.pools[name]
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) != 1 || p.count != 1 {
		t.Fatalf("%s: %d idle of %d instances, want 1 of 1", name, len(p.idle), p.count)
	}
	return p.idle[0].cmd.Process.Pid
}

// Without reserved concurrency a function runs at most MaxInstances at
// once; with it, at most the reservation; reserved 0 throttles always.
func TestInvoke_ConcurrencyThrottles(t *testing.T) {
	free, reserved, off := testFunction(t, "free"), testFunction(t, "reserved"), testFunction(t, "off")
	reserved.ReservedConcurrency, off.ReservedConcurrency = 1, 0
	r := newRuntime(t, 2, free, reserved, off)
	cases := []struct {
		name   string
		busy   int // invocations in flight
		reason string
	}{
		{name: "free", busy: 2, reason: "ConcurrentInvocationLimitExceeded"},                     // MaxInstances
		{name: "reserved", busy: 1, reason: "ReservedFunctionConcurrentInvocationLimitExceeded"}, // its reservation, below MaxInstances
		{name: "off", busy: 0, reason: "ReservedFunctionConcurrentInvocationLimitExceeded"},      // reserved 0
	}
	for _, c := range cases {
		var wg sync.WaitGroup
		for range c.busy {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, err := r.Invoke(context.Background(), c.name, []byte(`{"op":"sleep","sleepMs":1500}`)); err != nil || res.Failed() {
					t.Errorf("%s: busy invocation: %+v %v", c.name, res, err)
				}
			}()
		}
		waitBusy(t, r, c.name, c.busy)
		_, err := r.Invoke(context.Background(), c.name, []byte(`{}`))
		var th *ThrottledError
		if !errors.As(err, &th) || th.Reason != c.reason {
			t.Errorf("%s with %d busy: %v, want a throttle (%s)", c.name, c.busy, err, c.reason)
		}
		wg.Wait()
		if c.busy > 0 {
			if res, _ := invoke(t, r, c.name, `{}`); res.Failed() {
				t.Errorf("%s once free: %+v", c.name, res)
			}
		}
	}
}

// waitBusy waits until n instances of a function run.
func waitBusy(t *testing.T, r *Runtime, name string, n int) {
	t.Helper()
	p := r.pools[name]
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		p.mu.Lock()
		busy := len(p.all) - len(p.idle)
		p.mu.Unlock()
		if busy == n {
			return
		}
	}
	t.Fatalf("%s: %d instances never became busy", name, n)
}

// Requests above 6 MB are refused; a response above 6 MB is the function's
// Function.ResponseSizeTooLarge error.
func TestInvoke_PayloadLimits(t *testing.T) {
	r := newRuntime(t, 4, testFunction(t, "big"))
	_, err := r.Invoke(context.Background(), "big", make([]byte, 6*1024*1024+1))
	var tooLarge *PayloadTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 6291456 {
		t.Errorf("a 6 MB + 1 request: %v", err)
	}
	if err := r.InvokeAsync("big", make([]byte, 256*1024+1)); !errors.As(err, &tooLarge) || tooLarge.Limit != 262144 {
		t.Errorf("a 256 KB + 1 event: %v", err)
	}
	res, _ := invoke(t, r, "big", `{"op":"big","size":7000000}`)
	if res.FunctionError != "Unhandled" || res.ErrorType != "Function.ResponseSizeTooLarge" {
		t.Errorf("a 7 MB response: %+v", res)
	}
	if res, reply := invoke(t, r, "big", `{"op":"big","size":6000000}`); res.Failed() || len(reply.Data) != 6000000 {
		t.Errorf("a 6 MB response: %+v", res.ErrorMessage)
	}
}

func TestInvoke_UnknownFunction(t *testing.T) {
	r := newRuntime(t, 4, testFunction(t, "known"))
	var nf *NotFoundError
	if _, err := r.Invoke(context.Background(), "unknown", nil); !errors.As(err, &nf) {
		t.Errorf("invoke: %v", err)
	}
	if err := r.InvokeAsync("arn:aws:lambda:us-east-1:123456789012:function:unknown", nil); !errors.As(err, &nf) {
		t.Errorf("invoke async: %v", err)
	}
}
