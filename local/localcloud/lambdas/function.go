package lambdas

import "time"

// Function is one Lambda function as the local cloud runs it.
type Function struct {
	LogicalID, Name, ARN string
	// RoleLogicalID is the execution role's logical id: the function's
	// AWS_ACCESS_KEY_ID, by which the IAM proxy knows the role.
	RoleLogicalID string
	Bootstrap     string            // path of the bootstrap executable
	Env           map[string]string // Environment.Variables, resolved
	Timeout       time.Duration     // default 3 s, as AWS
	MemoryMB      int               // default 128, as AWS
	// ReservedConcurrency is -1 without a reservation; 0 throttles every
	// invocation; n allows at most n at once.
	ReservedConcurrency int
	Async               AsyncConfig
}

// AsyncConfig is what AWS::Lambda::EventInvokeConfig sets for
// asynchronous invocations.
type AsyncConfig struct {
	MaxRetries  int           // retries after a function error; default 2
	MaxEventAge time.Duration // an older event is dropped; default 6 h
}

// AWS's defaults, for a function whose template leaves them out.
const (
	defaultTimeout     = 3 * time.Second
	defaultMemoryMB    = 128
	defaultMaxRetries  = 2
	defaultMaxEventAge = 6 * time.Hour
)

// DefaultAsync is the asynchronous configuration of a function without
// an EventInvokeConfig.
func DefaultAsync() AsyncConfig {
	return AsyncConfig{MaxRetries: defaultMaxRetries, MaxEventAge: defaultMaxEventAge}
}

// withDefaults fills what a Function built by hand may leave zero.
func (f Function) withDefaults() Function {
	if f.Timeout <= 0 {
		f.Timeout = defaultTimeout
	}
	if f.MemoryMB <= 0 {
		f.MemoryMB = defaultMemoryMB
	}
	if f.Async == (AsyncConfig{}) {
		f.Async = DefaultAsync()
	}
	return f
}
