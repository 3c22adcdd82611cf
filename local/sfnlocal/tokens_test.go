package sfnlocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/local/sfnlocal"
)

// approval parks on a task token, as the rollout state machine does for approvals.
const approval = `{"StartAt":"Approve","States":{
  "Approve":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
    "Parameters":{"FunctionName":"notify","Payload":{"token.$":"$$.Task.Token","wave.$":"$.wave"}},
    "ResultPath":"$.approval",
    "Catch":[{"ErrorEquals":["Rejected"],"ResultPath":"$.rejection","Next":"Rejected"}],"Next":"Done"},
  "Rejected":{"Type":"Succeed"},
  "Done":{"Type":"Succeed"}}}`

type tokenFixture struct {
	srv    *sfnlocal.Server
	client *sfn.Client
	clk    *sfnlocal.FakeClock
	tokens chan string
	ex     string
}

func newTokenFixture(t *testing.T) *tokenFixture {
	return tokenFixtureOf(t, "approval", approval, "wave-1", `{"wave":1}`)
}

// tokenFixtureOf starts one execution of the definition with the input;
// its notify task sends the token on f.tokens.
func tokenFixtureOf(t *testing.T, name, def, execution, input string) *tokenFixture {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client, _ := newClient(t, clk)
	f := &tokenFixture{srv: srv, client: client, clk: clk, tokens: make(chan string, 4)}
	srv.RegisterLambda("notify", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct{ Token string }
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		f.tokens <- p.Token
		return json.RawMessage(`{"notified":true}`), nil
	})
	f.ex = start(t, client, create(t, client, name, def), execution, input)
	return f
}

// parked waits until the execution waits for its token (without moving the clock,
// which would run into the heartbeat timeout) and returns the token.
func (f *tokenFixture) parked(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if err := f.srv.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := f.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(f.ex)})
	if err != nil || d.Status != types.ExecutionStatusRunning {
		t.Fatalf("describe = %v, %v", d, err)
	}
	return <-f.tokens
}

func (f *tokenFixture) finish(t *testing.T) *sfn.DescribeExecutionOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.srv.Drive(ctx, f.clk, f.ex); err != nil {
		t.Fatal(err)
	}
	d, err := f.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(f.ex)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *tokenFixture) history(t *testing.T) []types.HistoryEvent {
	h, err := f.client.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(f.ex)})
	if err != nil {
		t.Fatal(err)
	}
	return h.Events
}

func TestTaskToken_Success(t *testing.T) {
	f := newTokenFixture(t)
	token := f.parked(t)
	ctx := context.Background()
	if _, err := f.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"approvedBy":"ops"}`)}); err != nil {
		t.Fatal(err)
	}
	d := f.finish(t)
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"approval":{"approvedBy":"ops"},"wave":1}` {
		t.Errorf("describe %s %s", d.Status, aws.ToString(d.Output))
	}
	var got []types.HistoryEventType
	for _, e := range f.history(t) {
		got = append(got, e.Type)
	}
	want := []types.HistoryEventType{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskSucceeded", "TaskStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}
	if len(got) != len(want) {
		t.Fatalf("history %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("history %v", got)
		}
	}
	events := f.history(t)
	if s := events[2].TaskScheduledEventDetails; aws.ToString(s.Resource) != "invoke.waitForTaskToken" || s.HeartbeatInSeconds != nil {
		t.Errorf("TaskScheduled %+v", s)
	}
	// The task is over: its token is answered.
	var timedOut *types.TaskTimedOut
	if _, err := f.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)}); !errors.As(err, &timedOut) {
		t.Errorf("second SendTaskSuccess: %v", err)
	}
	if _, err := f.client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)}); !errors.As(err, &timedOut) {
		t.Errorf("late SendTaskHeartbeat: %v", err)
	}
}

func TestTaskToken_FailureRoutesToCatch(t *testing.T) {
	f := newTokenFixture(t)
	token := f.parked(t)
	if _, err := f.client.SendTaskFailure(context.Background(), &sfn.SendTaskFailureInput{TaskToken: aws.String(token), Error: aws.String("Rejected"), Cause: aws.String("not today")}); err != nil {
		t.Fatal(err)
	}
	d := f.finish(t)
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"rejection":{"Cause":"not today","Error":"Rejected"},"wave":1}` {
		t.Errorf("describe %s %s", d.Status, aws.ToString(d.Output))
	}
	for _, e := range f.history(t) {
		if e.Type == types.HistoryEventTypeTaskFailed && (aws.ToString(e.TaskFailedEventDetails.Error) != "Rejected" || aws.ToString(e.TaskFailedEventDetails.Cause) != "not today") {
			t.Errorf("TaskFailed %+v", e.TaskFailedEventDetails)
		}
	}
}

// SendTaskHeartbeat tells whether the task still waits: without HeartbeatSeconds
// (refused) nothing times out, and the task goes on waiting for its answer.
func TestTaskToken_Heartbeat(t *testing.T) {
	f := newTokenFixture(t)
	token := f.parked(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		f.clk.Advance(time.Hour)
		if _, err := f.client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)}); err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
	}
	if _, err := f.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if d := f.finish(t); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("describe %s %s", d.Status, aws.ToString(d.Error))
	}
}

// A handler may answer its own token before the task is even submitted.
func TestTaskToken_AnsweredDuringInvocation(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client, _ := newClient(t, clk)
	srv.RegisterLambda("notify", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct{ Token string }
		_ = json.Unmarshal(in, &p)
		_, err := client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(p.Token), Output: aws.String(`"auto"`)})
		return json.RawMessage(`{}`), err
	})
	sm := create(t, client, "auto", approval)
	ex := start(t, client, sm, "a", `{"wave":2}`)
	if status, err := srv.Drive(context.Background(), clk, ex); err != nil || status != "SUCCEEDED" {
		t.Fatalf("Drive = %s, %v", status, err)
	}
}

func TestTaskToken_InvalidOutput(t *testing.T) {
	f := newTokenFixture(t)
	token := f.parked(t)
	var invalid *types.InvalidOutput
	if _, err := f.client.SendTaskSuccess(context.Background(), &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{nope`)}); !errors.As(err, &invalid) {
		t.Errorf("err = %v", err)
	}
	// Stopping the execution closes its token.
	if _, err := f.client.StopExecution(context.Background(), &sfn.StopExecutionInput{ExecutionArn: aws.String(f.ex)}); err != nil {
		t.Fatal(err)
	}
	var timedOut *types.TaskTimedOut
	if _, err := f.client.SendTaskSuccess(context.Background(), &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)}); !errors.As(err, &timedOut) {
		t.Errorf("after stop: %v", err)
	}
}

// expiring parks with a timeout taken from the input, as the rollout state
// machine does while an approval can expire.
const expiring = `{"StartAt":"Approve","States":{
  "Approve":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
    "Parameters":{"FunctionName":"notify","Payload":{"token.$":"$$.Task.Token"}},
    "TimeoutSecondsPath":"$.timeoutSeconds",
    "Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.error","Next":"Expired"}],"Next":"Done"},
  "Expired":{"Type":"Succeed"},
  "Done":{"Type":"Succeed"}}}`

// expiringFixture runs the expiring state machine alone (no other
// execution sends a token first) with the input.
func expiringFixture(t *testing.T, input string) *tokenFixture {
	return tokenFixtureOf(t, "expiring", expiring, "expiring-1", input)
}

func TestTaskToken_TimeoutSecondsPath(t *testing.T) {
	ctx := context.Background()
	f := expiringFixture(t, `{"timeoutSeconds":3600}`)
	token := f.parked(t)
	f.clk.Advance(59 * time.Minute)
	if err := f.srv.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(f.ex)}); d.Status != types.ExecutionStatusRunning {
		t.Fatalf("before the timeout the task still waits: %s", d.Status)
	}
	f.clk.Advance(time.Minute)
	d := f.finish(t)
	if d.Status != types.ExecutionStatusSucceeded || !json.Valid([]byte(aws.ToString(d.Output))) {
		t.Fatalf("status %s output %s", d.Status, aws.ToString(d.Output))
	}
	var out struct{ Error struct{ Error string } }
	_ = json.Unmarshal([]byte(aws.ToString(d.Output)), &out)
	if out.Error.Error != "States.Timeout" {
		t.Fatalf("output %s: the Catch of States.Timeout ran", aws.ToString(d.Output))
	}
	found := false
	for _, e := range f.history(t) {
		found = found || e.Type == types.HistoryEventTypeTaskTimedOut
	}
	if !found {
		t.Fatal("the history records TaskTimedOut")
	}
	var timedOut *types.TaskTimedOut
	if _, err := f.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)}); !errors.As(err, &timedOut) {
		t.Fatalf("a late SendTaskSuccess: %v, want TaskTimedOut", err)
	}
}

func TestTaskToken_TimeoutSecondsPathMustBeAPositiveInteger(t *testing.T) {
	f := expiringFixture(t, `{"timeoutSeconds":"soon"}`)
	d := f.finish(t)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Runtime" {
		t.Fatalf("status %s error %s", d.Status, aws.ToString(d.Error))
	}
}

func TestTaskTokenStateMachine_UnknownToken(t *testing.T) {
	s := sfnlocal.New(sfnlocal.Options{})
	defer s.Close()
	if arn, ok := s.TaskTokenStateMachine("AQnever"); ok {
		t.Errorf("a token never issued belongs to %s", arn)
	}
}
