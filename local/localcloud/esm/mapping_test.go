package esm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

const testStream = "arn:aws:dynamodb:us-east-1:123456789012:table/s-table/stream/2026-01-01T00:00:00.000"

func loadTemplate(t *testing.T, name string) *cfn.Template {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".template.json"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := cfn.Parse(raw, t.TempDir(), "S", cfn.Options{Attributes: map[string]string{"Table.StreamArn": testStream}})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestMappingsFrom(t *testing.T) {
	ms, err := MappingsFrom(loadTemplate(t, "mappings"))
	if err != nil {
		t.Fatal(err)
	}
	fn := "arn:aws:lambda:us-east-1:123456789012:function:s-fn"
	want := []Mapping{{
		LogicalID: "Full", FunctionARN: fn, StreamARN: testStream, BatchSize: 500, BatchingWindow: 2 * time.Second,
		StartingPosition: "LATEST", Filters: []string{`{"eventName":["INSERT"]}`}, Bisect: true, MaxRetries: 10,
		MaxRecordAge: 24 * time.Hour, ReportBatchItemFailures: true, Parallelization: 4,
		OnFailure: "arn:aws:sqs:us-east-1:123456789012:S-Failed", RoleLogicalID: "Role",
	}, {
		// Lambda's defaults: batches of 100, no window, retries until the records expire, which they never do.
		LogicalID: "Plain", FunctionARN: fn, StreamARN: testStream, BatchSize: 100, StartingPosition: "TRIM_HORIZON",
		MaxRetries: -1, Parallelization: 1, RoleLogicalID: "Role",
	}}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("mappings\n got %+v\nwant %+v", ms, want)
	}
}

func TestMappingsFrom_Refuses(t *testing.T) {
	_, err := MappingsFrom(loadTemplate(t, "refused"))
	for _, w := range []string{
		"event source mapping Sqs: EventSourceArn \"arn:aws:sqs:us-east-1:123456789012:q\": only DynamoDB streams",
		"event source mapping Prefix: filter",
		"[prefix] is not supported",
		"event source mapping Tumbling: TumblingWindowInSeconds is not emulated",
		"event source mapping NoFunction: FunctionName \"elsewhere\"",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%v\nwant an error with %q", err, w)
		}
	}
}
