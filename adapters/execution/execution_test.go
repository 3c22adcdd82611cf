package execution_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/rollout"
)

// fakeSFN records what it is asked; err answers SendTaskSuccess, and the
// names in taken answer StartExecution with ExecutionAlreadyExists.
type fakeSFN struct {
	err     error
	taken   map[string]bool
	woken   []string
	started []*sfn.StartExecutionInput
	onWake  func(token string)
}

func (f *fakeSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	f.woken = append(f.woken, *in.TaskToken)
	if f.onWake != nil {
		f.onWake(*in.TaskToken)
	}
	return &sfn.SendTaskSuccessOutput{}, f.err
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.started = append(f.started, in)
	if f.taken[*in.Name] {
		return nil, &types.ExecutionAlreadyExists{}
	}
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String("arn:" + *in.Name)}, nil
}

var _ execution.StepFunctions = (*fakeSFN)(nil)
var _ execution.StepFunctions = (*sfn.Client)(nil)

// tokens is one rollout's stored token, cleared only while it matches.
type tokens struct {
	r        rollout.Rollout
	clearErr error
}

func (s *tokens) GetRollout(_ context.Context, id string) (rollout.Rollout, error) {
	if id != s.r.ID {
		return rollout.Rollout{}, fmt.Errorf("rollout %s: %w", id, rollout.ErrNotFound)
	}
	return s.r, nil
}

func (s *tokens) ClearTaskToken(_ context.Context, _, token string) error {
	if s.clearErr != nil {
		return s.clearErr
	}
	if s.r.TaskToken == token {
		s.r.TaskToken = ""
	}
	return nil
}

func TestName(t *testing.T) {
	cases := []struct {
		n    int
		want string
	}{
		{n: 0, want: "r-1"}, // no execution recorded yet: the first
		{n: 1, want: "r-1"},
		{n: 2, want: "r-1-2"},
		{n: 13, want: "r-1-13"},
	}
	for _, c := range cases {
		if got := execution.Name("r-1", c.n); got != c.want {
			t.Errorf("Name(r-1, %d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// The one gone rule: each error that says the token parks nothing any
// more, and the ones that do not.
func TestGone(t *testing.T) {
	cases := []struct {
		name string
		err  error
		gone bool
	}{
		{name: "the execution ended or the task was answered", err: &types.TaskDoesNotExist{}, gone: true},
		{name: "the park timed out", err: &types.TaskTimedOut{}, gone: true},
		{name: "the token does not decode", err: &types.InvalidToken{}, gone: true},
		{name: "wrapped", err: fmt.Errorf("wake: %w", &types.TaskTimedOut{}), gone: true},
		{name: "throttled", err: errors.New("ThrottlingException"), gone: false},
		{name: "not allowed", err: &types.InvalidArn{}, gone: false},
		{name: "no error", err: nil, gone: false},
	}
	for _, c := range cases {
		if got := execution.Gone(c.err); got != c.gone {
			t.Errorf("%s: Gone = %v, want %v", c.name, got, c.gone)
		}
	}
}

// A wake clears a gone token and keeps it on any other failure, for the
// next action to wake.
func TestWaker_Wake_ClearsOnlyWhatNoLongerParks(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		wantToken string
		wantWoken bool
	}{
		{name: "woken", err: nil, wantToken: "", wantWoken: true},
		{name: "TaskDoesNotExist", err: &types.TaskDoesNotExist{}, wantToken: "", wantWoken: true},
		{name: "TaskTimedOut", err: &types.TaskTimedOut{}, wantToken: "", wantWoken: true},
		{name: "InvalidToken", err: &types.InvalidToken{}, wantToken: "", wantWoken: true},
		{name: "throttled", err: errors.New("ThrottlingException"), wantToken: "tok-1", wantWoken: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged bytes.Buffer
			st := &tokens{r: rollout.Rollout{ID: "r-1", TaskToken: "tok-1"}}
			w := execution.Waker{SFN: &fakeSFN{err: c.err}, Tokens: st, Log: slog.New(slog.NewTextHandler(&logged, nil))}
			if got := w.Wake(context.Background(), "r-1", "tok-1", "resume by Dana"); got != c.wantWoken {
				t.Errorf("Wake = %v, want %v", got, c.wantWoken)
			}
			if st.r.TaskToken != c.wantToken {
				t.Errorf("token %q, want %q", st.r.TaskToken, c.wantToken)
			}
			if kept := c.wantToken != ""; kept != strings.Contains(logged.String(), "wake a parked execution") {
				t.Errorf("log %q: a kept token is logged, a cleared one is not", logged.String())
			}
		})
	}
}

// The execution woken may park again before the wake clears the token it
// woke: the new token must survive, or nothing could wake it.
func TestWaker_WakeRollout_KeepsATokenStoredByANewPark(t *testing.T) {
	st := &tokens{r: rollout.Rollout{ID: "r-1", TaskToken: "tok-1"}}
	f := &fakeSFN{onWake: func(string) { st.r.TaskToken = "tok-2" }}
	r, err := execution.Waker{SFN: f, Tokens: st}.WakeRollout(context.Background(), "r-1", "approve by Dana")
	if err != nil {
		t.Fatal(err)
	}
	if r.TaskToken != "" || st.r.TaskToken != "tok-2" || len(f.woken) != 1 || f.woken[0] != "tok-1" {
		t.Errorf("returned token %q, stored %q, woken %v; want none returned, tok-2 stored, tok-1 woken", r.TaskToken, st.r.TaskToken, f.woken)
	}
}

func TestWaker_WakeRollout(t *testing.T) {
	t.Run("no token: nothing to wake", func(t *testing.T) {
		f := &fakeSFN{}
		r, err := execution.Waker{SFN: f, Tokens: &tokens{r: rollout.Rollout{ID: "r-1"}}}.WakeRollout(context.Background(), "r-1", "pause")
		if err != nil || r.ID != "r-1" || len(f.woken) != 0 {
			t.Errorf("rollout %q, %v, woken %v; want r-1 and no wake", r.ID, err, f.woken)
		}
	})
	t.Run("the rollout cannot be read", func(t *testing.T) {
		_, err := execution.Waker{SFN: &fakeSFN{}, Tokens: &tokens{}}.WakeRollout(context.Background(), "r-9", "pause")
		if !errors.Is(err, rollout.ErrNotFound) {
			t.Errorf("error %v, want ErrNotFound", err)
		}
	})
	t.Run("the output says why", func(t *testing.T) {
		f := &fakeSFN{}
		var out *sfn.SendTaskSuccessInput
		capture := captureSFN{fakeSFN: f, in: &out}
		if _, err := (execution.Waker{SFN: capture, Tokens: &tokens{r: rollout.Rollout{ID: "r-1", TaskToken: "t"}}}).WakeRollout(context.Background(), "r-1", "resume by Dana"); err != nil {
			t.Fatal(err)
		}
		if *out.Output != `{"resumedBecause":"resume by Dana"}` {
			t.Errorf("output %s", *out.Output)
		}
	})
}

type captureSFN struct {
	*fakeSFN
	in **sfn.SendTaskSuccessInput
}

func (c captureSFN) SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, opts ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	*c.in = in
	return c.fakeSFN.SendTaskSuccess(ctx, in, opts...)
}

// A failed clear is logged; the wake happened, so the token no longer parks.
func TestWaker_Wake_FailedClearIsLogged(t *testing.T) {
	var logged bytes.Buffer
	st := &tokens{r: rollout.Rollout{ID: "r-1", TaskToken: "tok-1"}, clearErr: errors.New("throttled")}
	w := execution.Waker{SFN: &fakeSFN{}, Tokens: st, Log: slog.New(slog.NewTextHandler(&logged, nil))}
	if !w.Wake(context.Background(), "r-1", "tok-1", "x") || !strings.Contains(logged.String(), "clear the task token") {
		t.Errorf("log %q", logged.String())
	}
	if !(execution.Waker{SFN: &fakeSFN{}}).Wake(context.Background(), "r-1", "tok-1", "no store") {
		t.Error("a waker without a store wakes and clears nothing")
	}
}

func inputOf(t *testing.T, in *sfn.StartExecutionInput) execution.Input {
	t.Helper()
	var got execution.Input
	if err := json.Unmarshal([]byte(*in.Input), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestStarter_Start(t *testing.T) {
	f := &fakeSFN{}
	s := execution.Starter{SFN: f, StateMachineArn: "arn:sm"}
	if err := s.Start(context.Background(), "r-1"); err != nil {
		t.Fatal(err)
	}
	in := f.started[0]
	if *in.Name != "r-1" || *in.StateMachineArn != "arn:sm" || *in.Input != `{"rolloutId":"r-1"}` {
		t.Errorf("started %s of %s with %s", *in.Name, *in.StateMachineArn, *in.Input)
	}
	f.taken = map[string]bool{"r-1": true}
	if err := s.Start(context.Background(), "r-1"); !strings.Contains(fmt.Sprint(err), "rollout r-1") {
		t.Errorf("a name taken by another input: %v, want an error naming the rollout", err)
	}
}

// A retried continue that finds its execution started has nothing to do.
func TestStarter_Continue(t *testing.T) {
	f := &fakeSFN{}
	s := execution.Starter{SFN: f, StateMachineArn: "arn:sm"}
	in := execution.Input{RolloutID: "r-1", Wave: "rest", Stage: "rest/eu-1"}
	if err := s.Continue(context.Background(), in, 2); err != nil {
		t.Fatal(err)
	}
	if *f.started[0].Name != "r-1-2" || inputOf(t, f.started[0]) != in {
		t.Errorf("started %s with %s", *f.started[0].Name, *f.started[0].Input)
	}
	f.taken = map[string]bool{"r-1-2": true}
	if err := s.Continue(context.Background(), in, 2); err != nil {
		t.Errorf("a retry: %v, want none", err)
	}
}

// Restart takes the first name after the executions recorded that no
// execution holds.
func TestStarter_Restart(t *testing.T) {
	f := &fakeSFN{taken: map[string]bool{"r-1-3": true, "r-1-4": true}}
	arn, err := execution.Starter{SFN: f, StateMachineArn: "arn:sm"}.Restart(context.Background(), "r-1", 2)
	if err != nil || arn != "arn:r-1-5" {
		t.Fatalf("arn %q, %v; want arn:r-1-5", arn, err)
	}
	if in := inputOf(t, f.started[2]); in != (execution.Input{RolloutID: "r-1"}) {
		t.Errorf("input %+v", in)
	}
	all := &fakeSFN{taken: map[string]bool{"r-1-2": true, "r-1-3": true, "r-1-4": true, "r-1-5": true, "r-1-6": true}}
	var exists *types.ExecutionAlreadyExists
	if _, err := (execution.Starter{SFN: all}).Restart(context.Background(), "r-1", 1); !errors.As(err, &exists) || len(all.started) != 5 {
		t.Errorf("every name taken: %v after %d tries, want ExecutionAlreadyExists after 5", err, len(all.started))
	}
}
