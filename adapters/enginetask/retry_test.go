package enginetask

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// lambdaRetried are the errors of a Lambda invocation that every Task state
// retries: the transient service errors AWS recommends retrying
// (ClientExecutionTimeout, Service, AWSLambda, SdkClient), throttling, and
// Lambda.Unknown, which is how Step Functions reports a function that ran
// out of memory or crashed, and Sandbox.Timedout, the errorType Lambda
// gives a function that timed out (the local cloud's runtime reports it
// so too); the tasks are idempotent, so one timeout must not move a
// rollout to failed. RetryableError is the tasks' own.
var lambdaRetried = []string{"Lambda.ClientExecutionTimeoutException", "Lambda.ServiceException", "Lambda.AWSLambdaException",
	"Lambda.SdkClientException", "Lambda.TooManyRequestsException", "Lambda.Unknown", "Sandbox.Timedout", "RetryableError"}

func TestContract_EveryLambdaTaskRetriesTransientErrors(t *testing.T) {
	raw, err := os.ReadFile("../../statemachines/rollout.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		States map[string]struct {
			Type, Resource string
			Retry          []struct{ ErrorEquals []string }
		}
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	tasks := 0
	for name, st := range def.States {
		if st.Type != "Task" || !strings.HasPrefix(st.Resource, "arn:aws:states:::lambda:invoke") {
			continue
		}
		tasks++
		var retried []string
		for _, r := range st.Retry {
			retried = append(retried, r.ErrorEquals...)
		}
		for _, e := range lambdaRetried {
			if !slices.Contains(retried, e) {
				t.Errorf("task %q does not retry %s (it retries %v)", name, e, retried)
			}
		}
	}
	if tasks == 0 {
		t.Fatal("no Lambda task found in the state machine")
	}
}
