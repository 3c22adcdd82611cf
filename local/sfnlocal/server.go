package sfnlocal

import (
	"context"
	"log/slog"
	"sync"
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Clock is the time source; nil means the real clock.
	Clock Clock
	// Region and AccountID appear in ARNs; they default to us-east-1 and 123456789012.
	Region    string
	AccountID string
	// Logger receives debug logs of executions; nil discards them.
	Logger *slog.Logger
}

// Server is the local Step Functions endpoint. It is an http.Handler that speaks the
// service's JSON 1.0 protocol on POST /.
type Server struct {
	clock   Clock
	region  string
	account string
	log     *slog.Logger
	lambdas lambdas
	busy    *busy

	mu         sync.Mutex
	machines   map[string]*stateMachine // by ARN
	executions map[string]*execution    // by ARN
	tokens     map[string]*taskToken
	closed     bool
}

// New returns a Server.
func New(opts Options) *Server {
	s := &Server{
		clock:      opts.Clock,
		region:     opts.Region,
		account:    opts.AccountID,
		log:        opts.Logger,
		busy:       newBusy(),
		machines:   map[string]*stateMachine{},
		executions: map[string]*execution{},
		tokens:     map[string]*taskToken{},
	}
	if s.clock == nil {
		s.clock = RealClock()
	}
	if s.region == "" {
		s.region = "us-east-1"
	}
	if s.account == "" {
		s.account = "123456789012"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Region returns the region that appears in ARNs.
func (s *Server) Region() string { return s.region }

// AccountID returns the account that appears in ARNs.
func (s *Server) AccountID() string { return s.account }

// RegisterLambda serves the function named by nameOrARN with h. A name, a full ARN and
// an ARN or name with a qualifier (version or alias) all resolve to the same function
// name; registering a name again replaces its handler.
func (s *Server) RegisterLambda(nameOrARN string, h LambdaHandler) {
	s.lambdas.register(nameOrARN, h)
}

// WaitIdle blocks until no execution can make progress without the clock moving or a
// task token being answered (or ctx is done). With a FakeClock this tells a test that it
// is time to advance the clock.
func (s *Server) WaitIdle(ctx context.Context) error { return s.busy.wait(ctx) }

// Drive runs an execution on a fake clock: it waits until the server is idle and moves
// clk to the next pending timer, again and again, until the execution is no longer
// RUNNING or nothing is pending (the execution then waits for a task token). It returns
// the execution's status.
func (s *Server) Drive(ctx context.Context, clk *FakeClock, executionArn string) (string, error) {
	e, err := s.lookupExecution(executionArn)
	if err != nil {
		return "", err
	}
	for {
		if err := s.WaitIdle(ctx); err != nil {
			return "", err
		}
		status := e.currentStatus()
		if status != statusRunning || !clk.AdvanceToNext() {
			return status, nil
		}
	}
}

// Close stops every running execution without recording anything in their history,
// so that their goroutines end. The Server must not be used afterwards.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	var running []*execution
	for _, e := range s.executions {
		running = append(running, e)
	}
	s.mu.Unlock()
	for _, e := range running {
		e.root.cancel()
	}
}

func (s *Server) lookupExecution(arn string) (*execution, error) {
	if _, err := checkARN(arn, "execution"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.executions[arn]
	if !ok {
		return nil, apiErr(errExecutionDoesNotExist, "Execution Does Not Exist: '%s'", arn)
	}
	return e, nil
}

func (s *Server) logf(level slog.Level, msg string, args ...any) {
	s.log.Log(context.Background(), level, msg, args...)
}
