package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// localstack/run.sh deploys this app; it cannot run here (no Docker), so
// these checks keep it in step with the app: every context key it passes
// is a setting, and every stack output it reads exists in the stack it
// deploys (stage local, no gateway).
func TestLocalStack_RunScriptMatchesTheApp(t *testing.T) {
	raw, err := os.ReadFile("../localstack/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(raw)
	known := map[string]bool{}
	for _, s := range settings {
		known[s.key] = true
	}
	keys := regexp.MustCompile(`-c ([A-Za-z]+)=`).FindAllStringSubmatch(script, -1)
	if len(keys) == 0 {
		t.Fatal("run.sh passes no context")
	}
	for _, k := range keys {
		if !known[k[1]] {
			t.Errorf("run.sh passes -c %s, which infra/config.go does not know", k[1])
		}
	}
	outputs := regexp.MustCompile(`output ([A-Za-z]+)\)`).FindAllStringSubmatch(script, -1)
	if len(outputs) == 0 {
		t.Fatal("run.sh reads no stack output")
	}
	s := synthesized(t, map[string]string{"gateway": "false", "deletionProtection": "false"})
	for _, o := range outputs {
		if found := s.template.FindOutputs(jsii.String(o[1]), nil); len(*found) == 0 {
			t.Errorf("run.sh reads output %s, which the stack does not have", o[1])
		}
	}
	if !strings.Contains(script, `"Myriarch-$stage"`) || stackName(Config{Stage: "local"}) != "Myriarch-local" {
		t.Error("run.sh deploys a stack name the app does not create")
	}
}
