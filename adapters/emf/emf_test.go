package emf

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	r := Record{Namespace: "Myriarch", Dimensions: []string{"Stage"}, Metrics: []Metric{{"RolloutsResumed", "Count"}},
		Values: map[string]any{"Stage": "prod", "RolloutsResumed": 2, "Rollout": "r-1"}}
	if err := r.Write(&buf, at); err != nil {
		t.Fatal(err)
	}
	if buf.Bytes()[buf.Len()-1] != '\n' || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("one record per line: %q", buf.String())
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"Timestamp":1772366400000,"CloudWatchMetrics":[{"Namespace":"Myriarch","Dimensions":[["Stage"]],"Metrics":[{"Name":"RolloutsResumed","Unit":"Count"}]}]}`
	if string(got["_aws"]) != want || string(got["Stage"]) != `"prod"` || string(got["RolloutsResumed"]) != "2" || string(got["Rollout"]) != `"r-1"` {
		t.Fatalf("record %s", buf.String())
	}
}
