package lambdas

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// sdkClient is the AWS SDK's Lambda client pointed at the handler, with
// retries off so that each call is one request.
func sdkClient(t *testing.T, r *Runtime) *awslambda.Client {
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	return awslambda.New(awslambda.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("RoleCaller", "local", ""),
		RetryMaxAttempts: 1,
	})
}

// The SDK's Invoke works against the handler as against the service.
func TestHandler_SDKInvoke(t *testing.T) {
	fn := testFunction(t, "sdk")
	off := testFunction(t, "off")
	off.ReservedConcurrency = 0
	r := newRuntime(t, 4, fn, off)
	c := sdkClient(t, r)
	ctx := context.Background()

	out, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(fn.ARN), Payload: []byte(`{"env":["GREETING"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var reply fnReply
	if json.Unmarshal(out.Payload, &reply); out.StatusCode != 200 || out.FunctionError != nil || reply.Env["GREETING"] != "hello" || aws.ToString(out.ExecutedVersion) != "$LATEST" {
		t.Errorf("sync invoke: %d %v %s", out.StatusCode, out.FunctionError, out.Payload)
	}

	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sdk"), Payload: []byte(`{"op":"fail"}`)})
	if err != nil || aws.ToString(out.FunctionError) != "Unhandled" || string(out.Payload) != `{"errorMessage":"boom","errorType":"errBoom"}` {
		t.Errorf("function error: %v %+v", err, out)
	}

	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sdk"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
	if err != nil || out.StatusCode != 202 {
		t.Errorf("event: %v %+v", err, out)
	}
	waitFor(t, func() bool { return starts(t, r, "sdk") == 3 })

	out, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("sdk"), InvocationType: types.InvocationTypeDryRun})
	if err != nil || out.StatusCode != 204 {
		t.Errorf("dry run: %v %+v", err, out)
	}
}

// The Invoke API's errors reach the SDK as their exception types.
func TestHandler_SDKErrors(t *testing.T) {
	off := testFunction(t, "off")
	off.ReservedConcurrency = 0
	r := newRuntime(t, 4, off)
	c := sdkClient(t, r)
	ctx := context.Background()

	_, err := c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("missing")})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("missing function: %v", err)
	}
	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("off")})
	var throttled *types.TooManyRequestsException
	if !errors.As(err, &throttled) || throttled.Reason != types.ThrottleReasonReservedFunctionConcurrentInvocationLimitExceeded {
		t.Errorf("throttled: %v", err)
	}
	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("off"), Payload: make([]byte, 6*1024*1024+1)})
	var tooLarge *types.RequestTooLargeException
	if !errors.As(err, &tooLarge) {
		t.Errorf("6 MB + 1 sync: %v", err)
	}
	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("off"), InvocationType: types.InvocationTypeEvent, Payload: make([]byte, 256*1024+1)})
	if !errors.As(err, &tooLarge) {
		t.Errorf("256 KB + 1 async: %v", err)
	}
	_, err = c.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("off"), Qualifier: aws.String("7")})
	if !errors.As(err, &notFound) {
		t.Errorf("a version other than $LATEST: %v", err)
	}
}
