package sfnlocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/pkg/sfnlocal"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const role = "arn:aws:iam::123456789012:role/sfn"

// newClient starts the endpoint on an httptest server and returns a real SDK client.
func newClient(t *testing.T, clk sfnlocal.Clock) (*sfnlocal.Server, *sfn.Client) {
	t.Helper()
	srv := sfnlocal.New(sfnlocal.Options{Clock: clk})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	client := sfn.New(sfn.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(hs.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
	return srv, client
}

func TestSDK_Smoke(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client := newClient(t, clk)
	srv.RegisterLambda("double", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ N int }
		_ = json.Unmarshal(in, &v)
		return json.Marshal(map[string]int{"N": v.N * 2})
	})
	ctx := context.Background()
	def := `{"StartAt":"Double","States":{
	  "Double":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"double","Payload.$":"$"},"ResultSelector":{"N.$":"$.Payload.N"},"Next":"Wait"},
	  "Wait":{"Type":"Wait","Seconds":3600,"End":true}}}`
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("smoke"), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"N":21}`)})
	if err != nil {
		t.Fatal(err)
	}
	status, err := srv.Drive(ctx, clk, *ex.ExecutionArn)
	if err != nil || status != "SUCCEEDED" {
		t.Fatalf("Drive = %s, %v", status, err)
	}
	d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: ex.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(d.Output); got != `{"N":42}` {
		t.Errorf("output = %s", got)
	}
	if got := d.StopDate.Sub(*d.StartDate); got != time.Hour {
		t.Errorf("duration = %v", got)
	}
	h, err := client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: ex.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h.Events {
		t.Logf("%d %d %s", e.Id, e.PreviousEventId, e.Type)
	}
	_, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:smoke:nope")})
	var dne *types.ExecutionDoesNotExist
	if !errors.As(err, &dne) {
		t.Errorf("err = %v", err)
	}
}
