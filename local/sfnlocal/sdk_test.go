package sfnlocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/myriarch/myriarch/local/sfnlocal"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const role = "arn:aws:iam::123456789012:role/sfn"

// newClient starts the endpoint on an httptest server and returns a real SDK client.
func newClient(t *testing.T, clk sfnlocal.Clock) (*sfnlocal.Server, *sfn.Client, string) {
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
	return srv, client, hs.URL
}

func create(t *testing.T, client *sfn.Client, name, def string) string {
	t.Helper()
	out, err := client.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		t.Fatalf("CreateStateMachine: %v", err)
	}
	return *out.StateMachineArn
}

func start(t *testing.T, client *sfn.Client, sm, name, input string) string {
	t.Helper()
	out, err := client.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String(name), Input: aws.String(input)})
	if err != nil {
		t.Fatalf("StartExecution: %v", err)
	}
	return *out.ExecutionArn
}

func TestSDK_RunAndDescribe(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client, _ := newClient(t, clk)
	srv.RegisterLambda("double", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ N int }
		_ = json.Unmarshal(in, &v)
		return json.Marshal(map[string]int{"N": v.N * 2})
	})
	ctx := context.Background()
	sm := create(t, client, "smoke", `{"StartAt":"Double","States":{
	  "Double":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"double","Payload.$":"$"},"ResultPath":"$.doubled","Next":"Wait"},
	  "Wait":{"Type":"Wait","TimestampPath":"$.until","OutputPath":"$.doubled.Payload","End":true}}}`)
	if sm != "arn:aws:states:us-east-1:123456789012:stateMachine:smoke" {
		t.Errorf("ARN %s", sm)
	}
	ex := start(t, client, sm, "run-1", `{"N":21,"until":"2025-03-01T13:00:00Z"}`)
	if ex != "arn:aws:states:us-east-1:123456789012:execution:smoke:run-1" {
		t.Errorf("ARN %s", ex)
	}
	if status, err := srv.Drive(ctx, clk, ex); err != nil || status != "SUCCEEDED" {
		t.Fatalf("Drive = %s, %v", status, err)
	}
	d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(ex)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"N":42}` || aws.ToString(d.Input) != `{"N":21,"until":"2025-03-01T13:00:00Z"}` || aws.ToString(d.StateMachineArn) != sm {
		t.Errorf("describe = %+v", d)
	}
	if !d.StartDate.Equal(t0) || d.StopDate.Sub(*d.StartDate) != time.Hour {
		t.Errorf("dates %v %v", d.StartDate, d.StopDate)
	}
	h, err := client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(ex)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Events {
		got = append(got, string(e.Type))
	}
	if strings.Join(got, ",") != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSucceeded,TaskStateExited,WaitStateEntered,WaitStateExited,ExecutionSucceeded" {
		t.Errorf("history %v", got)
	}
	if s := h.Events[2].TaskScheduledEventDetails; s == nil || aws.ToString(s.Resource) != "invoke" || aws.ToString(s.ResourceType) != "lambda" {
		t.Errorf("TaskScheduled details %+v", s)
	}
	if e := h.Events[1].StateEnteredEventDetails; e == nil || aws.ToString(e.Name) != "Double" || aws.ToString(e.Input) != `{"N":21,"until":"2025-03-01T13:00:00Z"}` {
		t.Errorf("TaskStateEntered details %+v", e)
	}
	if e := h.Events[0]; e.ExecutionStartedEventDetails == nil || aws.ToString(e.ExecutionStartedEventDetails.RoleArn) != role || !e.Timestamp.Equal(t0) {
		t.Errorf("ExecutionStarted %+v", e)
	}

	// Reverse order and paging.
	var ids []int64
	var token *string
	for {
		page, err := client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(ex), ReverseOrder: true, MaxResults: 4, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			ids = append(ids, e.Id)
		}
		if token = page.NextToken; token == nil {
			break
		}
	}
	if len(ids) != 9 || ids[0] != 9 || ids[8] != 1 {
		t.Errorf("reverse ids %v", ids)
	}
	noData, err := client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(ex), IncludeExecutionData: aws.Bool(false)})
	if err != nil || noData.Events[0].ExecutionStartedEventDetails.Input != nil {
		t.Errorf("includeExecutionData false: %v", err)
	}
}

// Every API error arrives as the SDK's typed error.
func TestSDK_Errors(t *testing.T) {
	_, client, _ := newClient(t, sfnlocal.NewFakeClock(t0))
	ctx := context.Background()
	sm := create(t, client, "errs", `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.until","End":true}}}`)
	start(t, client, sm, "running", `{"a":1,"until":"2025-03-01T13:00:00Z"}`)
	missingSM := "arn:aws:states:us-east-1:123456789012:stateMachine:nope"
	missingEx := "arn:aws:states:us-east-1:123456789012:execution:errs:nope"
	check := func(name string, err error, target any) {
		t.Helper()
		if !errors.As(err, target) {
			t.Errorf("%s: err = %v, want %T", name, err, target)
		}
	}
	var (
		exDNE     *types.ExecutionDoesNotExist
		smDNE     *types.StateMachineDoesNotExist
		taskDNE   *types.TaskDoesNotExist
		invDef    *types.InvalidDefinition
		exists    *types.ExecutionAlreadyExists
		badArn    *types.InvalidArn
		smExists  *types.StateMachineAlreadyExists
		badToken  *types.InvalidToken
		invalid   *types.ValidationException
		badName   *types.InvalidName
		badInput  *types.InvalidExecutionInput
		missing   *types.MissingRequiredParameter
		badOutput *types.InvalidOutput
		typeNS    *types.StateMachineTypeNotSupported
	)
	_, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(missingEx)})
	check("DescribeExecution", err, &exDNE)
	_, err = client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(missingEx)})
	check("GetExecutionHistory", err, &exDNE)
	_, err = client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(missingEx)})
	check("StopExecution", err, &exDNE)
	_, err = client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(missingSM)})
	check("StartExecution", err, &smDNE)
	_, err = client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(missingSM)})
	check("ListExecutions", err, &smDNE)
	_, err = client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("unknown-token"), Output: aws.String("{}")})
	check("SendTaskSuccess unknown", err, &taskDNE)
	_, err = client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String("unknown-token")})
	check("SendTaskHeartbeat unknown", err, &taskDNE)
	_, err = client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String("not a token")})
	check("SendTaskFailure invalid", err, &badToken)
	_, err = client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(strings.Repeat("x", 2049)), Output: aws.String("{}")})
	check("SendTaskSuccess long", err, &badToken)
	_, err = client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Wait","TimestampPath":"$.t","Next":"B"}}}`), RoleArn: aws.String(role)})
	check("CreateStateMachine", err, &invDef)
	if err != nil && !strings.Contains(err.Error(), "Missing 'Next' target: B at /States/A/Next") {
		t.Errorf("InvalidDefinition message: %v", err)
	}
	_, err = client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String("running"), Input: aws.String(`{"a":2}`)})
	check("StartExecution other input", err, &exists)
	_, err = client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String("not_a_valid_arn")})
	check("ListExecutions invalid", err, &badArn)
	_, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(sm)})
	check("DescribeExecution with a state machine ARN", err, &badArn)
	_, err = client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("errs"), Definition: aws.String(`{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`), RoleArn: aws.String(role)})
	check("CreateStateMachine again", err, &smExists)
	_, err = client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("r"), Definition: aws.String(`{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`), RoleArn: aws.String("role")})
	check("CreateStateMachine role", err, &badArn)
	_, err = client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm), StatusFilter: "succeeded"})
	check("ListExecutions statusFilter", err, &invalid)
	// ValidationException is not in the SDK's model of ListStateMachines: it arrives as a
	// generic API error with that code.
	_, err = client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 1001})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ValidationException" {
		t.Errorf("ListStateMachines maxResults: %v", err)
	}
	_, err = client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("a b"), Definition: aws.String(`{}`), RoleArn: aws.String(role)})
	check("CreateStateMachine name", err, &badName)
	_, err = client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{'a'}`)})
	check("StartExecution input", err, &badInput)
	_, err = client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("x"), Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`), RoleArn: aws.String(role)})
	check("CreateStateMachine EXPRESS", err, &typeNS)
	_, _ = badOutput, missing
	// The operations nothing of ours calls are not implemented: the SDK sees the
	// service's answer to an operation it does not know.
	for name, call := range map[string]func() error{
		"UpdateStateMachine": func() error {
			_, err := client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(sm), Definition: aws.String(`{}`)})
			return err
		},
		"DescribeStateMachine": func() error {
			_, err := client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(sm)})
			return err
		},
		"DescribeStateMachineForExecution": func() error {
			_, err := client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(missingEx)})
			return err
		},
		"DeleteStateMachine": func() error {
			_, err := client.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(sm)})
			return err
		},
	} {
		var unknown smithy.APIError
		if err := call(); !errors.As(err, &unknown) || unknown.ErrorCode() != "UnknownOperationException" {
			t.Errorf("%s: %v, want UnknownOperationException", name, err)
		}
	}
}

// The JSON 1.0 wire format, as the AWS CLI sees it.
func TestProtocol_Raw(t *testing.T) {
	_, _, url := newClient(t, sfnlocal.NewFakeClock(t0))
	post := func(target, body string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		if target != "" {
			req.Header.Set("X-Amz-Target", target)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header
	}
	code, body, hdr := post("AWSStepFunctions.DescribeExecution", `{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:a:b"}`)
	if code != 400 || body != `{"__type":"ExecutionDoesNotExist","message":"Execution Does Not Exist: 'arn:aws:states:us-east-1:123456789012:execution:a:b'"}` || hdr.Get("Content-Type") != "application/x-amz-json-1.0" {
		t.Errorf("%d %s %v", code, body, hdr)
	}
	code, body, _ = post("AWSStepFunctions.ListStateMachines", `{}`)
	if code != 200 || body != `{"stateMachines":[]}` {
		t.Errorf("%d %s", code, body)
	}
	code, body, _ = post("AWSStepFunctions.CreateStateMachine", `{"name":"n","definition":"{\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Succeed\"}}}","roleArn":"`+role+`"}`)
	if code != 200 || !strings.Contains(body, `"creationDate":1740830400`) {
		t.Errorf("%d %s", code, body)
	}
	if code, body, _ = post("AWSStepFunctions.StartSyncExecution", `{}`); code != 400 || !strings.Contains(body, "StateMachineTypeNotSupported") {
		t.Errorf("%d %s", code, body)
	}
	if code, body, _ = post("AWSStepFunctions.Nope", `{}`); code != 400 || !strings.Contains(body, "UnknownOperationException") {
		t.Errorf("%d %s", code, body)
	}
	if code, body, _ = post("AWSStepFunctions.StartExecution", `{"stateMachineArn": 5}`); code != 400 || !strings.Contains(body, "SerializationException") {
		t.Errorf("%d %s", code, body)
	}
	if code, body, _ = post("AWSStepFunctions.CreateStateMachine", `{"definition":"{}"}`); code != 400 || !strings.Contains(body, `Value null at 'name'`) {
		t.Errorf("%d %s", code, body)
	}
}

func TestSDK_StateMachineLifecycle(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client, _ := newClient(t, clk)
	ctx := context.Background()
	v1 := `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.until","Next":"S"},"S":{"Type":"Succeed","OutputPath":"$.v1"}}}`
	v2 := `{"StartAt":"S","States":{"S":{"Type":"Succeed","OutputPath":"$.v2"}}}`
	const input = `{"until":"2025-03-01T12:00:10Z","v1":"v1","v2":"v2"}`
	sm := create(t, client, "life", v1)
	if again := create(t, client, "life", v1); again != sm { // idempotent
		t.Errorf("create again = %s", again)
	}
	ex := start(t, client, sm, "run", input)
	if _, err := srv.Drive(ctx, clk, ex); err != nil {
		t.Fatal(err)
	}
	if d, _ := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(ex)}); aws.ToString(d.Output) != `"v1"` {
		t.Errorf("output %s, want \"v1\"", aws.ToString(d.Output))
	}
	for i := 0; i < 3; i++ {
		create(t, client, "m"+string(rune('a'+i)), v2)
	}
	page, err := client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 2})
	if err != nil || len(page.StateMachines) != 2 || page.NextToken == nil || aws.ToString(page.StateMachines[0].Name) != "life" {
		t.Fatalf("page 1: %+v %v", page, err)
	}
	page2, err := client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 2, NextToken: page.NextToken})
	if err != nil || len(page2.StateMachines) != 2 || page2.NextToken != nil {
		t.Fatalf("page 2: %+v %v", page2, err)
	}
}

func TestSDK_ExecutionsStartStopList(t *testing.T) {
	clk := sfnlocal.NewFakeClock(t0)
	srv, client, _ := newClient(t, clk)
	ctx := context.Background()
	sm := create(t, client, "runs", `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.until","End":true}}}`)
	long := start(t, client, sm, "long", `{"until":"2025-03-01T13:00:00Z"}`)
	// Same name and input while running: the same execution.
	again, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String("long"), Input: aws.String(`{"until":"2025-03-01T13:00:00Z"}`)})
	if err != nil || *again.ExecutionArn != long {
		t.Fatalf("idempotent start: %v", err)
	}
	clk.Advance(time.Second)
	short := start(t, client, sm, "short", `{"until":"2025-03-01T12:00:02Z"}`)
	if err := srv.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if _, err := srv.Drive(ctx, clk, short); err != nil {
		t.Fatal(err)
	}
	stop, err := client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(long), Error: aws.String("Operator"), Cause: aws.String("abort requested")})
	if err != nil || !stop.StopDate.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("stop: %v %v", stop, err)
	}
	d, _ := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(long)})
	if d.Status != types.ExecutionStatusAborted || aws.ToString(d.Error) != "Operator" || aws.ToString(d.Cause) != "abort requested" {
		t.Errorf("stopped: %+v", d)
	}
	h, _ := client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(long)})
	last := h.Events[len(h.Events)-1]
	if last.Type != types.HistoryEventTypeExecutionAborted || aws.ToString(last.ExecutionAbortedEventDetails.Error) != "Operator" {
		t.Errorf("last event %+v", last)
	}
	// A closed execution's name cannot be reused.
	var exists *types.ExecutionAlreadyExists
	if _, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String("long"), Input: aws.String(`{"until":"2025-03-01T13:00:00Z"}`)}); !errors.As(err, &exists) {
		t.Errorf("restart closed: %v", err)
	}
	running := start(t, client, sm, "third", `{"until":"2025-03-01T12:01:02Z"}`)
	for filter, want := range map[types.ExecutionStatus][]string{
		"":                             {running, short, long}, // newest first
		types.ExecutionStatusRunning:   {running},
		types.ExecutionStatusSucceeded: {short},
		types.ExecutionStatusAborted:   {long},
		types.ExecutionStatusFailed:    nil,
	} {
		out, err := client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm), StatusFilter: filter})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range out.Executions {
			got = append(got, *e.ExecutionArn)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("filter %q: %v, want %v", filter, got, want)
		}
	}
}
