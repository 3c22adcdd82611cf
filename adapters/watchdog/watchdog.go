package watchdog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/adapters/emf"
	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Store is what the watchdog reads: the fleets, the active rollout of each
// fleet and kind, and the rollout itself.
type Store interface {
	Fleets(ctx context.Context) ([]fleet.Fleet, string, error)
	ActiveRolloutID(ctx context.Context, fleet string, k policy.Kind) (string, error)
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
}

// StepFunctions is the part of the Step Functions API the watchdog calls.
type StepFunctions interface {
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	execution.StartAPI
}

// Watchdog checks every active rollout once per Run.
type Watchdog struct {
	Store           Store
	SFN             StepFunctions
	StateMachineArn string
	Clock           func() time.Time
	Grace           time.Duration // default DefaultGrace
	Log             *slog.Logger
}

// Resumed is a rollout the watchdog started a new execution for.
type Resumed struct {
	Rollout      string `json:"rollout"`
	ExecutionArn string `json:"executionArn"`
	Why          string `json:"why"`
}

// Report is the outcome of one Run.
type Report struct {
	Checked            int           `json:"checked"`
	Resumed            []Resumed     `json:"resumed,omitempty"`
	OldestApprovalWait time.Duration `json:"-"`
	// OldestApprovalRollout is the rollout that waits longest for approval.
	OldestApprovalRollout string `json:"oldestApprovalRollout,omitempty"`
}

// Run checks every active rollout. A rollout that cannot be checked is
// logged and the run goes on with the next; the error joins them all.
func (w Watchdog) Run(ctx context.Context) (Report, error) {
	fleets, _, err := w.Store.Fleets(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("watchdog: list fleets: %w", err)
	}
	var rep Report
	var errs []error
	for _, f := range fleets {
		for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
			if err := w.check(ctx, f.Name, k, &rep); err != nil {
				w.logger().Error("watchdog: check", "fleet", f.Name, "kind", string(k), "error", err.Error())
				errs = append(errs, err)
			}
		}
	}
	return rep, errors.Join(errs...)
}

func (w Watchdog) check(ctx context.Context, fleetName string, k policy.Kind, rep *Report) error {
	id, err := w.Store.ActiveRolloutID(ctx, fleetName, k)
	if err != nil || id == "" {
		return err
	}
	r, err := w.Store.GetRollout(ctx, id)
	if err != nil {
		return err
	}
	rep.Checked++
	now := w.Clock().UTC()
	if wait := ApprovalWait(r, now); wait > rep.OldestApprovalWait {
		rep.OldestApprovalWait, rep.OldestApprovalRollout = wait, r.ID
	}
	ex, err := w.describe(ctx, r)
	if err != nil {
		return err
	}
	v := Decide(r, ex, now, w.grace())
	if !v.Resume {
		return nil
	}
	arn, err := w.resume(ctx, r)
	if err != nil {
		return fmt.Errorf("resume rollout %s (%s): %w", r.ID, v.Why, err)
	}
	w.logger().Warn("watchdog: resumed a stranded rollout", "rollout", r.ID, "fleet", r.Fleet, "status", string(r.Status),
		"why", v.Why, "execution", arn)
	rep.Resumed = append(rep.Resumed, Resumed{Rollout: r.ID, ExecutionArn: arn, Why: v.Why})
	return nil
}

// describe asks for the recorded execution, or for the first one when none
// was recorded (it may run without having recorded itself yet).
func (w Watchdog) describe(ctx context.Context, r rollout.Rollout) (ExecutionState, error) {
	arn := r.ExecutionArn
	if arn == "" {
		arn = ExecutionArn(w.StateMachineArn, execution.Name(r.ID, 1))
	}
	out, err := w.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	var missing *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &missing):
		return ExecutionState{Missing: true}, nil
	case err != nil:
		return ExecutionState{}, fmt.Errorf("describe execution %s: %w", arn, err)
	}
	st := ExecutionState{Status: string(out.Status), Running: out.Status == types.ExecutionStatusRunning}
	if out.StopDate != nil {
		st.Stopped = *out.StopDate
	}
	return st, nil
}

// resume starts the rollout's next execution (execution.Starter.Restart).
func (w Watchdog) resume(ctx context.Context, r rollout.Rollout) (string, error) {
	return execution.Starter{SFN: w.SFN, StateMachineArn: w.StateMachineArn}.Restart(ctx, r.ID, r.Executions)
}

// ExecutionArn is the ARN of the execution name of a state machine.
func ExecutionArn(stateMachineArn, name string) string {
	return strings.Replace(stateMachineArn, ":stateMachine:", ":execution:", 1) + ":" + name
}

func (w Watchdog) grace() time.Duration {
	if w.Grace > 0 {
		return w.Grace
	}
	return DefaultGrace
}

func (w Watchdog) logger() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Metric names of the watchdog in CloudWatch (namespace Myriarch,
// dimension Stage): the alarms of the deployment read them.
const (
	MetricNamespace      = "Myriarch"
	MetricResumed        = "RolloutsResumed"
	MetricOldestApproval = "OldestApprovalWaitSeconds"
)

// WriteMetrics writes the run's metrics as one embedded-metric-format
// record (adapters/emf).
func (rep Report) WriteMetrics(out io.Writer, stage string, at time.Time) error {
	values := map[string]any{"Stage": stage, MetricResumed: len(rep.Resumed), MetricOldestApproval: rep.OldestApprovalWait.Seconds(),
		"Checked": rep.Checked}
	if rep.OldestApprovalRollout != "" {
		values["OldestApprovalRollout"] = rep.OldestApprovalRollout
	}
	return emf.Record{Namespace: MetricNamespace, Dimensions: []string{"Stage"},
		Metrics: []emf.Metric{{Name: MetricResumed, Unit: "Count"}, {Name: MetricOldestApproval, Unit: "Seconds"}},
		Values:  values}.Write(out, at)
}
