package main

// The assertion tests synthesize the real app once per configuration and
// share the result: one synthesis costs seconds (CDK runs in a Node.js
// child process through jsii), every assertion after it milliseconds.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

const testStage = "test"

// synthesis is one synthesized stack: CDK's assertions Template, its JSON
// decoded for plain Go checks, and the cloud assembly directory.
type synthesis struct {
	template  assertions.Template
	resources map[string]resource
	outdir    string
	config    Config
	// nag lists cdk-nag's findings that no suppression covers (path, rule
	// and message), read at synthesis.
	nag []string
	err error
}

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	Deletion   string         `json:"DeletionPolicy"`
}

var (
	synthMu sync.Mutex
	synths  = map[string]*synthesis{}
	tmpRoot string
)

func TestMain(m *testing.M) {
	// jsii's kernel starts while packages initialize, before this runs:
	// its Node.js version banner is silenced by scripts/synth.sh's
	// environment, not here.
	os.Unsetenv("CDK_DEFAULT_ACCOUNT") // environment-agnostic, as in CI
	os.Unsetenv("CDK_DEFAULT_REGION")
	dir, err := os.MkdirTemp("", "infra-test-")
	if err != nil {
		panic(err)
	}
	tmpRoot = dir
	code := m.Run()
	jsii.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// synthesized returns the stack synthesized with the test stage and the
// given context, once per distinct context.
func synthesized(t *testing.T, context map[string]string) *synthesis {
	t.Helper()
	key := fmt.Sprint(context)
	synthMu.Lock()
	defer synthMu.Unlock()
	if s, ok := synths[key]; ok {
		if s.err != nil {
			t.Fatal(s.err)
		}
		return s
	}
	s := synthesize(context)
	synths[key] = s
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s
}

func synthesize(extra map[string]string) (s *synthesis) {
	s = &synthesis{}
	defer func() {
		if r := recover(); r != nil {
			s.err = fmt.Errorf("synthesis panicked: %v", r)
		}
	}()
	s.outdir, s.err = os.MkdirTemp(tmpRoot, "cdk.out-")
	if s.err != nil {
		return s
	}
	context, err := cdkContext()
	if err != nil {
		s.err = err
		return s
	}
	settingsCtx := map[string]string{"stage": testStage, "lambdaBuildDir": stubLambdas()}
	for k, v := range extra {
		settingsCtx[k] = v
	}
	for k, v := range settingsCtx {
		context[k] = v
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(s.outdir), Context: &context})
	s.config, s.err = LoadConfig(contextOf(app), func(string) (string, bool) { return "", false })
	if s.err != nil {
		return s
	}
	stack, err := newStack(app, s.config)
	if err != nil {
		s.err = err
		return s
	}
	s.template = assertions.Template_FromStack(stack, nil)
	for _, m := range *assertions.Annotations_FromStack(stack).FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))) {
		s.nag = append(s.nag, fmt.Sprint(*m.Id, ": ", m.Entry.Data))
	}
	raw, err := json.Marshal(s.template.ToJSON())
	if err != nil {
		s.err = err
		return s
	}
	var doc struct{ Resources map[string]resource }
	s.err = json.Unmarshal(raw, &doc)
	s.resources = doc.Resources
	app.Synth(nil) // writes the cloud assembly: assets and manifests under outdir
	return s
}

// cdkContext is the context of the repository's cdk.json (the feature
// flags), so the tests check what `cdk synth` produces.
func cdkContext() (map[string]any, error) {
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	return doc.Context, nil
}

// stubLambdas makes a synth-only build directory: each function's
// bootstrap is a text file naming it (distinct, so each asset is its own).
func stubLambdas() string {
	dir := filepath.Join(tmpRoot, "lambda")
	for _, f := range functionSpecs {
		_ = os.MkdirAll(filepath.Join(dir, f.Name), 0o755)
		_ = os.WriteFile(filepath.Join(dir, f.Name, "bootstrap"), []byte("synth-only stub of "+f.Name+"\n"), 0o755)
	}
	return dir
}

// ofType lists the resources of a CloudFormation type by logical id.
func (s *synthesis) ofType(typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range s.resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// function returns the logical id and resource of a deployed function.
func (s *synthesis) function(t *testing.T, name string) (string, resource) {
	t.Helper()
	for id, r := range s.ofType("AWS::Lambda::Function") {
		if r.Properties["FunctionName"] == functionName(s.config, name) {
			return id, r
		}
	}
	t.Fatalf("no Lambda function %s", functionName(s.config, name))
	return "", resource{}
}

// table returns the logical id and resource of a deployed table.
func (s *synthesis) table(t *testing.T, base string) (string, resource) {
	t.Helper()
	for id, r := range s.ofType("AWS::DynamoDB::Table") {
		if r.Properties["TableName"] == tablePrefix(s.config)+base {
			return id, r
		}
	}
	t.Fatalf("no table %s", tablePrefix(s.config)+base)
	return "", resource{}
}

// must runs a CDK assertion, turning its panic into a test error.
func must(t *testing.T, what string, assertion func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	assertion()
}

// refs lists the logical ids a CloudFormation value refers to (Ref and
// Fn::GetAtt, at any depth), sorted.
func refs(v any) []string {
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["Ref"].(string); ok && !strings.HasPrefix(r, "AWS::") {
				seen[r] = true
			}
			if g, ok := x["Fn::GetAtt"].([]any); ok && len(g) > 0 {
				seen[fmt.Sprint(g[0])] = true
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// flatten renders a CloudFormation value as text with references spelled
// {id} and pseudo parameters as their names, to compare ARNs built by Join.
func flatten(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if r, ok := x["Ref"].(string); ok {
			return "{" + r + "}"
		}
		if g, ok := x["Fn::GetAtt"].([]any); ok {
			return fmt.Sprintf("{%v.%v}", g[0], g[1])
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			parts, _ := j[1].([]any)
			var b strings.Builder
			for i, p := range parts {
				if i > 0 {
					b.WriteString(fmt.Sprint(j[0]))
				}
				b.WriteString(flatten(p))
			}
			return b.String()
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// list turns a value that CloudFormation allows as one item or a list
// into a list.
func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}
