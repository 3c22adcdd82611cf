package iam

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRecorder_KeepsEachCallOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	// An earlier run's calls: the file is this run's alone.
	if err := os.WriteFile(path, []byte(`{"role":"Roleold","action":"dynamodb:Scan","resource":"*","allowed":false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	get := Call{Role: "Roleengine", Action: "dynamodb:GetItem", Resource: table + "agents", Allowed: true}
	put := Call{Role: "Roleengine", Action: "dynamodb:PutItem", Resource: table + "targets"}
	for _, c := range []Call{get, put, get, put, get} {
		if err := r.Record(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := r.Calls(); !reflect.DeepEqual(got, []Call{get, put}) {
		t.Errorf("calls: %+v", got)
	}
	if got := r.Denials(); !reflect.DeepEqual(got, []Call{put}) {
		t.Errorf("denials: %+v", got)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"Roleengine","action":"dynamodb:GetItem","resource":"arn:aws:dynamodb:us-east-1:123456789012:table/agents","allowed":true}
{"role":"Roleengine","action":"dynamodb:PutItem","resource":"arn:aws:dynamodb:us-east-1:123456789012:table/targets","allowed":false}
`
	if string(raw) != want {
		t.Errorf("file:\n%s\nwant:\n%s", raw, want)
	}
}

func TestRecorder_SameCallAllowedAndDeniedAreTwo(t *testing.T) {
	r, _ := NewRecorder("")
	c := Call{Role: "R", Action: "dynamodb:GetItem", Resource: "*"}
	r.Record(c)
	c.Allowed = true
	r.Record(c)
	if n := len(r.Calls()); n != 2 {
		t.Errorf("%d calls", n)
	}
	if !strings.Contains(r.Denials()[0].Action, "GetItem") {
		t.Error(r.Denials())
	}
}
