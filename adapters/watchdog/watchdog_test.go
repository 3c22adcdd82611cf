package watchdog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/adapters/watchdog"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/sfnlocal"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rollouts is the watchdog's view of the store: one active rollout per
// fleet and kind.
type rollouts map[string]rollout.Rollout

func (rs rollouts) Fleets(context.Context) ([]fleet.Fleet, string, error) {
	var fs []fleet.Fleet
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Fleet] {
			seen[r.Fleet] = true
			fs = append(fs, fleet.Fleet{Name: r.Fleet})
		}
	}
	return fs, "c1", nil
}

func (rs rollouts) ActiveRolloutID(_ context.Context, f string, k policy.Kind) (string, error) {
	for id, r := range rs {
		if r.Fleet == f && r.Kind == k {
			return id, nil
		}
	}
	return "", nil
}

func (rs rollouts) GetRollout(_ context.Context, id string) (rollout.Rollout, error) {
	return rs[id], nil
}

// endpoint is the local Step Functions endpoint with the rollout machine
// stood in for by a machine that waits (a parked execution) and one that
// ends at once.
func endpoint(t *testing.T, clk sfnlocal.Clock) (client *sfn.Client, waits, ends string) {
	t.Helper()
	srv := sfnlocal.New(sfnlocal.Options{Clock: clk})
	srv.RegisterLambda("park", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		return nil, sfnlocal.AwaitCancel(ctx)
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	client = sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	create := func(name, def string) string {
		out, err := client.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
			Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String("arn:aws:iam::123456789012:role/r")})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	waits = create("myriarch-rollout", `{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"park"},"End":true}}}`)
	ends = create("ends", `{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`)
	return client, waits, ends
}

func start(t *testing.T, c *sfn.Client, sm, name string) string {
	t.Helper()
	out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String(name),
		Input: aws.String(`{"rolloutId":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ExecutionArn)
}

func TestRunResumesStrandedRollouts(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	c, sm, ends := endpoint(t, clk)
	ctx := context.Background()
	running := start(t, c, sm, "r-running")
	ended := start(t, c, ends, "r-ended")
	waitEnded(t, c, ended)
	// r-taken's next name is taken by an execution that ended before it
	// recorded itself: the watchdog takes the one after.
	taken := start(t, c, sm, "r-taken-2")
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(taken)}); err != nil {
		t.Fatal(err)
	}
	since := t0.Add(-90 * time.Minute)
	store := rollouts{
		"r-running": {ID: "r-running", Fleet: "a", Kind: policy.KindConfig, Status: rollout.Running, ExecutionArn: running, Executions: 1},
		"r-lost": {ID: "r-lost", Fleet: "a", Kind: policy.KindVersion, Status: rollout.WaitingApproval, Executions: 1,
			ExecutionArn: watchdog.ExecutionArn(sm, "r-lost"),
			Waves:        []rollout.Wave{{Index: 0, Status: rollout.WaveWaitingApproval, WaitingSince: &since}}},
		"r-ended":  {ID: "r-ended", Fleet: "b", Kind: policy.KindConfig, Status: rollout.Paused, ExecutionArn: ended, Executions: 1},
		"r-taken":  {ID: "r-taken", Fleet: "c", Kind: policy.KindConfig, Status: rollout.Running, ExecutionArn: watchdog.ExecutionArn(sm, "r-taken"), Executions: 1},
		"r-done":   {ID: "r-done", Fleet: "c", Kind: policy.KindVersion, Status: rollout.Completed, ExecutionArn: watchdog.ExecutionArn(sm, "r-done")},
		"r-unborn": {ID: "r-unborn", Fleet: "d", Kind: policy.KindConfig, Status: rollout.Pending, CreatedAt: t0},
	}
	now := t0.Add(time.Minute) // within the grace of r-ended's end and r-unborn's creation
	w := watchdog.Watchdog{Store: store, SFN: c, StateMachineArn: sm, Clock: func() time.Time { return now }}

	rep, err := w.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := resumed(rep); len(got) != 2 || got["r-lost"] != watchdog.ExecutionArn(sm, "r-lost-2") || got["r-taken"] != watchdog.ExecutionArn(sm, "r-taken-3") {
		t.Fatalf("resumed %v, want r-lost as r-lost-2 and r-taken as r-taken-3", got)
	}
	if rep.Checked != 6 || rep.OldestApprovalWait != 91*time.Minute || rep.OldestApprovalRollout != "r-lost" {
		t.Errorf("checked %d, oldest approval %s of %q", rep.Checked, rep.OldestApprovalWait, rep.OldestApprovalRollout)
	}
	for _, name := range []string{"r-lost-2", "r-taken-3"} {
		out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(watchdog.ExecutionArn(sm, name))})
		if err != nil || out.Status != types.ExecutionStatusRunning || aws.ToString(out.Input) != `{"rolloutId":"`+name[:len(name)-2]+`"}` {
			t.Fatalf("%s: %v %+v", name, err, out)
		}
	}

	// Past the grace, the paused rollout whose execution ended and the
	// pending one that never started are resumed; the others now run.
	now = t0.Add(watchdog.DefaultGrace + time.Minute)
	store["r-lost"] = withExecution(store["r-lost"], watchdog.ExecutionArn(sm, "r-lost-2"))
	store["r-taken"] = withExecution(store["r-taken"], watchdog.ExecutionArn(sm, "r-taken-3"))
	rep, err = w.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := resumed(rep); len(got) != 2 || got["r-ended"] != watchdog.ExecutionArn(sm, "r-ended-2") || got["r-unborn"] != watchdog.ExecutionArn(sm, "r-unborn") {
		t.Fatalf("resumed %v, want r-ended as r-ended-2 and r-unborn as its first execution", got)
	}
}

// waitEnded waits until the endpoint has run the execution to its end: it
// runs on a goroutine of its own.
func waitEnded(t *testing.T, c *sfn.Client, arn string) {
	t.Helper()
	for range 1000 {
		out, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != types.ExecutionStatusRunning {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s never ended", arn)
}

func withExecution(r rollout.Rollout, arn string) rollout.Rollout {
	r.ExecutionArn, r.Executions = arn, r.Executions+1
	return r
}

func resumed(rep watchdog.Report) map[string]string {
	m := map[string]string{}
	for _, r := range rep.Resumed {
		m[r.Rollout] = r.ExecutionArn
	}
	return m
}

// Two watchdogs that find the same stranded rollout start one execution.
func TestRunTwiceStartsOnce(t *testing.T) {
	c, sm, _ := endpoint(t, sfnlocal.NewFakeClock(t0))
	store := rollouts{"r-1": {ID: "r-1", Fleet: "a", Kind: policy.KindConfig, Status: rollout.Running, Executions: 1, ExecutionArn: watchdog.ExecutionArn(sm, "r-1")}}
	w := watchdog.Watchdog{Store: store, SFN: c, StateMachineArn: sm, Clock: func() time.Time { return t0 }}
	for range 2 {
		rep, err := w.Run(context.Background())
		if err != nil || len(rep.Resumed) != 1 || rep.Resumed[0].ExecutionArn != watchdog.ExecutionArn(sm, "r-1-2") {
			t.Fatalf("%v %+v", err, rep)
		}
	}
	out, err := c.ListExecutions(context.Background(), &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm)})
	if err != nil || len(out.Executions) != 1 {
		t.Fatalf("executions %v %+v, want only r-1-2", err, out)
	}
}

// A failed describe is reported and the other rollouts are still checked.
func TestRunGoesOnAfterAnError(t *testing.T) {
	c, sm, _ := endpoint(t, sfnlocal.NewFakeClock(t0))
	store := rollouts{
		"r-bad":  {ID: "r-bad", Fleet: "a", Kind: policy.KindConfig, Status: rollout.Running, Executions: 1, ExecutionArn: "not-an-arn"},
		"r-good": {ID: "r-good", Fleet: "b", Kind: policy.KindConfig, Status: rollout.Running, Executions: 1, ExecutionArn: watchdog.ExecutionArn(sm, "r-good")},
	}
	rep, err := watchdog.Watchdog{Store: store, SFN: c, StateMachineArn: sm, Clock: func() time.Time { return t0 }}.Run(context.Background())
	if err == nil || len(rep.Resumed) != 1 || rep.Resumed[0].Rollout != "r-good" {
		t.Fatalf("%v %+v: want an error for r-bad and r-good resumed", err, rep)
	}
}

func TestWriteMetrics(t *testing.T) {
	var buf bytes.Buffer
	rep := watchdog.Report{Checked: 3, Resumed: []watchdog.Resumed{{Rollout: "r-1"}}, OldestApprovalWait: 90 * time.Second, OldestApprovalRollout: "r-2"}
	if err := rep.WriteMetrics(&buf, "prod", t0); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Stage                     string
		RolloutsResumed           int
		OldestApprovalWaitSeconds float64
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	d := rec.AWS.CloudWatchMetrics
	if rec.AWS.Timestamp != t0.UnixMilli() || len(d) != 1 || d[0].Namespace != "Myriarch" || len(d[0].Dimensions) != 1 || d[0].Dimensions[0][0] != "Stage" ||
		len(d[0].Metrics) != 2 || rec.Stage != "prod" || rec.RolloutsResumed != 1 || rec.OldestApprovalWaitSeconds != 90 {
		t.Fatalf("record %s", buf.String())
	}
	if buf.Bytes()[buf.Len()-1] != '\n' {
		t.Error("one record per line")
	}
}
