package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/policy"
)

type fakeInvoker struct {
	out *awslambda.InvokeOutput
	err error
	in  *awslambda.InvokeInput
}

func (f *fakeInvoker) Invoke(_ context.Context, in *awslambda.InvokeInput, _ ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error) {
	f.in = in
	return f.out, f.err
}

func TestLambda(t *testing.T) {
	reply, _ := json.Marshal(plannertask.Reply{CreatedRolloutID: "r-1", CreatedTargets: 3, Target: "0.162.0"})
	ok := &fakeInvoker{out: &awslambda.InvokeOutput{Payload: reply}}
	got, err := Lambda{Client: ok, Function: "planner"}.PlanFleet(context.Background(), "edge", policy.KindVersion)
	if want := (plannertask.Reply{CreatedRolloutID: "r-1", CreatedTargets: 3, Target: "0.162.0"}); err != nil || got != want {
		t.Errorf("reply %+v, %v; want %+v", got, err, want)
	}
	var req plannertask.Request
	if json.Unmarshal(ok.in.Payload, &req); req.Fleet != "edge" || req.Kind != policy.KindVersion || *ok.in.FunctionName != "planner" {
		t.Errorf("request %+v to %s", req, *ok.in.FunctionName)
	}
	cases := []struct {
		name string
		f    *fakeInvoker
	}{
		{name: "invoke fails", f: &fakeInvoker{err: errors.New("throttled")}},                                                                      // the call
		{name: "the function fails", f: &fakeInvoker{out: &awslambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{}`)}}}, // its error
		{name: "not a reply", f: &fakeInvoker{out: &awslambda.InvokeOutput{Payload: []byte(`[1]`)}}},                                               // its answer
	}
	for _, c := range cases {
		if _, err := (Lambda{Client: c.f, Function: "planner"}).PlanFleet(context.Background(), "edge", policy.KindConfig); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// Asynchronous planning queues the invocation (InvocationType Event) and
// reads no reply.
func TestLambda_Async(t *testing.T) {
	f := &fakeInvoker{out: &awslambda.InvokeOutput{StatusCode: 202}}
	if _, err := (Lambda{Client: f, Function: "planner", Async: true}).PlanFleet(context.Background(), "edge", policy.KindConfig); err != nil {
		t.Fatal(err)
	}
	if f.in.InvocationType != lambdatypes.InvocationTypeEvent {
		t.Fatalf("invocation type %q, want Event", f.in.InvocationType)
	}
}

func replyOutput(payload []byte) *awslambda.InvokeOutput {
	return &awslambda.InvokeOutput{StatusCode: 200, Payload: payload}
}

// The request the Lambda client sends is the golden request.
func TestLambda_SendsTheGoldenRequest(t *testing.T) {
	f := &fakeInvoker{out: replyOutput(golden(t, "plan-reply.json"))}
	got, err := Lambda{Client: f, Function: "planner"}.PlanFleet(t.Context(), "edge", policy.KindVersion)
	if err != nil {
		t.Fatal(err)
	}
	var sent, want plannertask.Request
	if err := json.Unmarshal(f.in.Payload, &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(golden(t, "plan-request.json"), &want); err != nil || sent != want {
		t.Errorf("sent %s, want the golden request %+v (%v)", f.in.Payload, want, err)
	}
	if got.CreatedTargets != 4 || got.Stragglers != 2 || got.EndedRolloutID == "" {
		t.Errorf("reply %+v, want the golden reply's counts", got)
	}
}

// golden reads a file of plannertask's golden wire.
func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
