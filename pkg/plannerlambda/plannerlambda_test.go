package plannerlambda

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/policy"
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

func TestLambdaPlanning(t *testing.T) {
	reply, _ := json.Marshal(api.PlanReply{CreatedRolloutID: "r-1", CreatedTargets: 3, Target: "0.162.0"})
	ok := &fakeInvoker{out: &awslambda.InvokeOutput{Payload: reply}}
	d, err := LambdaPlanning{Client: ok, Function: "planner"}.PlanFleet(context.Background(), "edge", policy.KindVersion)
	if err != nil || d.Created == nil || d.Created.Rollout.ID != "r-1" || len(d.Created.Targets) != 3 {
		t.Errorf("decision %+v, %v; want the created rollout r-1 with 3 targets", d, err)
	}
	var req api.PlanRequest
	if json.Unmarshal(ok.in.Payload, &req); req.Fleet != "edge" || req.Kind != policy.KindVersion || *ok.in.FunctionName != "planner" {
		t.Errorf("request %+v to %s", req, *ok.in.FunctionName)
	}
	cases := []struct {
		name string
		f    *fakeInvoker
	}{
		{"invoke fails", &fakeInvoker{err: errors.New("throttled")}},                                                                      // the call
		{"the function fails", &fakeInvoker{out: &awslambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{}`)}}}, // its error
		{"not a reply", &fakeInvoker{out: &awslambda.InvokeOutput{Payload: []byte(`[1]`)}}},                                               // its answer
	}
	for _, c := range cases {
		if _, err := (LambdaPlanning{Client: c.f, Function: "planner"}).PlanFleet(context.Background(), "edge", policy.KindConfig); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// Asynchronous planning queues the invocation (InvocationType Event) and
// reads no reply.
func TestLambdaPlanning_Async(t *testing.T) {
	f := &fakeInvoker{out: &awslambda.InvokeOutput{StatusCode: 202}}
	if _, err := (LambdaPlanning{Client: f, Function: "planner", Async: true}).PlanFleet(context.Background(), "edge", policy.KindConfig); err != nil {
		t.Fatal(err)
	}
	if f.in.InvocationType != lambdatypes.InvocationTypeEvent {
		t.Fatalf("invocation type %q, want Event", f.in.InvocationType)
	}
}
