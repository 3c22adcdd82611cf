// Command fn is the Lambda function of the lambdas package's tests: what it
// does depends on the event, so that one binary covers every path of the
// runtime (a reply, a function error, a crash, a timeout, a large reply).
package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

type event struct {
	Op      string   `json:"op"`      // "echo" (default), "fail", "exit", "sleep", "big"
	Env     []string `json:"env"`     // variables to report
	SleepMS int      `json:"sleepMs"` // for "sleep"
	Size    int      `json:"size"`    // for "big": bytes of the reply's data
}

type reply struct {
	PID  int               `json:"pid"`
	Env  map[string]string `json:"env"`
	Data string            `json:"data,omitempty"`
}

// errBoom's type name is the errorType Lambda reports.
type errBoom struct{}

func (errBoom) Error() string { return "boom" }

func handle(_ context.Context, e event) (reply, error) {
	r := reply{PID: os.Getpid(), Env: map[string]string{}}
	for _, k := range e.Env {
		if v, ok := os.LookupEnv(k); ok {
			r.Env[k] = v
		}
	}
	switch e.Op {
	case "fail":
		return r, errBoom{}
	case "exit":
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Duration(e.SleepMS) * time.Millisecond)
	case "big":
		r.Data = strings.Repeat("x", e.Size)
	case "", "echo":
	default:
		return r, errors.New("unknown op " + e.Op)
	}
	return r, nil
}

func main() {
	// A function that fails its init, as one missing its configuration does.
	if os.Getenv("FN_FAIL_INIT") != "" {
		os.Exit(1)
	}
	lambda.Start(handle)
}
