package lambdas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Runtime runs functions under RIE. Set its fields, then Add functions;
// Invoke, InvokeAsync and Handler may then be used concurrently.
type Runtime struct {
	RIE     string            // path of aws-lambda-rie
	BaseEnv map[string]string // the cloud's variables for every function: AWS_REGION, AWS_ENDPOINT_URL, AWS_SECRET_ACCESS_KEY, ...
	// MaxInstances bounds the instances of a function without reserved
	// concurrency (default 4): the account's concurrency, scaled down.
	MaxInstances int
	Log          *slog.Logger
	// LogDir receives each function's output (RIE's and the bootstrap's)
	// in <LogDir>/<function name>.log, its log group; empty discards it.
	LogDir string
	// Now is the clock of asynchronous events' ages (default time.Now).
	Now func() time.Time
	// Delays are the waits between asynchronous attempts (default AWS's).
	Delays Delays

	once    sync.Once
	mu      sync.Mutex
	pools   map[string]*pool // by function name
	logs    []io.Closer
	life    context.Context // ends at Close: queued events stop
	stop    context.CancelFunc
	queued  sync.WaitGroup
	dropped atomic.Int64
	closed  bool
}

// timeoutGrace is how long past a function's timeout the runtime waits
// for RIE to report it before declaring the timeout itself.
const timeoutGrace = 2 * time.Second

func (r *Runtime) init() {
	r.once.Do(func() {
		r.pools = map[string]*pool{}
		r.life, r.stop = context.WithCancel(context.Background())
		if r.MaxInstances <= 0 {
			r.MaxInstances = 4
		}
		if r.Log == nil {
			r.Log = slog.New(slog.DiscardHandler)
		}
		if r.Now == nil {
			r.Now = time.Now
		}
		r.Delays = r.Delays.withDefaults()
	})
}

// Add makes a function invocable. Its instances start on first use.
func (r *Runtime) Add(fn Function) error {
	r.init()
	if r.RIE == "" {
		return errors.New("lambdas: Runtime.RIE is unset (scripts/with-lambda-rie.sh sets MYRIARCH_LAMBDA_RIE)")
	}
	if fn.Name == "" || fn.Bootstrap == "" {
		return fmt.Errorf("lambdas: function %q needs a name and a bootstrap", fn.LogicalID)
	}
	fn = fn.withDefaults()
	abs, err := filepath.Abs(fn.Bootstrap)
	if err != nil {
		return err
	}
	fn.Bootstrap = abs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errStopped
	}
	if _, dup := r.pools[fn.Name]; dup {
		return fmt.Errorf("lambdas: function %s added twice", fn.Name)
	}
	out, err := r.logFile(fn.Name)
	if err != nil {
		return err
	}
	env := environ(r.BaseEnv, fn)
	p := newPool(fn, r.MaxInstances)
	p.start = func() (*instance, error) { return startInstance(r.RIE, fn, env, out) }
	r.pools[fn.Name] = p
	return nil
}

func (r *Runtime) logFile(name string) (io.Writer, error) {
	if r.LogDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(r.LogDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(r.LogDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	r.logs = append(r.logs, f)
	return f, nil
}

// lookup finds a function by name or ARN.
func (r *Runtime) lookup(nameOrARN string) (*pool, error) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errStopped
	}
	if p, ok := r.pools[nameOrARN]; ok {
		return p, nil
	}
	for _, p := range r.pools {
		if p.fn.matches(nameOrARN) {
			return p, nil
		}
	}
	return nil, &NotFoundError{Function: nameOrARN}
}

// Invoke runs one synchronous invocation. A function's failure is a
// Result with FunctionError set; the error is for what the Invoke API
// itself refuses (*ThrottledError, *NotFoundError, *PayloadTooLargeError)
// or a failure of the emulator. An invocation whose caller stops waiting
// (ctx) runs on to its end, as in Lambda.
func (r *Runtime) Invoke(ctx context.Context, nameOrARN string, payload []byte) (Result, error) {
	p, err := r.lookup(nameOrARN)
	if err != nil {
		return Result{}, err
	}
	if err := checkSize(payload, false); err != nil {
		return Result{}, err
	}
	inst, cold, err := p.acquire()
	if err != nil {
		return Result{}, err
	}
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.run(p, inst, cold, payload)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// run is one invocation on an acquired instance, which it gives back or,
// after a timeout or a runtime failure, replaces.
func (r *Runtime) run(p *pool, inst *instance, cold bool, payload []byte) (Result, error) {
	id := uuid.NewString()
	fn := p.fn
	r.Log.Debug("invoke", "function", fn.Name, "requestId", id, "cold", cold)
	ctx, cancel := context.WithTimeout(r.life, fn.Timeout+timeoutGrace)
	defer cancel()
	reply, err := inst.invoke(ctx, id, payload)
	var v verdict
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		v = verdict{result: timedOut(id, fmt.Sprintf("Task timed out after %d.00 seconds", timeoutSeconds(fn.Timeout))), replace: true}
	case err != nil:
		p.release(inst, true)
		return Result{}, fmt.Errorf("lambdas: invoke %s: %w", fn.Name, err)
	default:
		v, err = classify(id, reply)
	}
	p.release(inst, v.replace)
	if v.result.ErrorType == errorTimedOut {
		r.Log.Warn("function timed out; its instance is replaced", "function", fn.Name, "requestId", id, "timeout", fn.Timeout)
	}
	if err != nil {
		return Result{}, fmt.Errorf("lambdas: invoke %s: %w", fn.Name, err)
	}
	return v.result, nil
}

// Close stops every instance and drops the queued asynchronous events.
func (r *Runtime) Close() error {
	r.init()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	pools := r.pools
	r.mu.Unlock()
	r.stop()
	for _, p := range pools {
		p.close()
	}
	r.queued.Wait()
	var errs []error
	for _, c := range r.logs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
