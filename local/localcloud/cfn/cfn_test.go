package cfn

import (
	"strings"
	"testing"
)

var testOptions = Options{Region: "eu-west-1", Account: "111122223333",
	Parameters: map[string]string{"Cert": "arn:cert"},
	Attributes: map[string]string{"Table1.StreamArn": "arn:aws:dynamodb:eu-west-1:111122223333:table/s-table/stream/2026"}}

func TestLoad_ResolvesEveryIntrinsic(t *testing.T) {
	tpl, err := Load("testdata", "S-test", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	env := tpl.Resources["Fn1"].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	want := map[string]string{
		"BUS":       "s-bus",
		"MACHINE":   "arn:aws:states:eu-west-1:111122223333:stateMachine:m",
		"BUCKET":    "assets-111122223333-eu-west-1",
		"SUBLIST":   "a/arn:aws:lambda:eu-west-1:111122223333:function:s-fn/${Literal}",
		"PARTITION": "aws", // goformation's Fn::Split result goes through Fn::Select
		"CERT":      "arn:cert",
		"SIZE":      "3", // a parameter's default
		"STREAM":    "arn:aws:dynamodb:eu-west-1:111122223333:table/s-table/stream/2026",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %v, want %s", k, env[k], v)
		}
	}
	if got := tpl.Resources["Fn1"].Properties["Role"]; got != "arn:aws:iam::111122223333:role/S-test-Role1" {
		t.Errorf("role ARN = %v (a role without RoleName is <stack>-<logical id>)", got)
	}
	if got := tpl.Outputs["Fn"]; got != "s-fn" {
		t.Errorf("output = %v", got)
	}
	if id, ok := tpl.LogicalIDOf("arn:aws:lambda:eu-west-1:111122223333:function:s-fn"); !ok || id != "Fn1" {
		t.Errorf("LogicalIDOf(function ARN) = %q, %v", id, ok)
	}
	if arn := tpl.Arn("Secret1"); !strings.HasPrefix(arn, "arn:aws:secretsmanager:eu-west-1:111122223333:secret:s/secret-") || len(arn) != len("arn:aws:secretsmanager:eu-west-1:111122223333:secret:s/secret-")+6 {
		t.Errorf("secret ARN = %s: Secrets Manager appends six characters", arn)
	}
}

// A value the template needs and the local cloud cannot give is an error,
// never the empty string.
func TestLoad_UnresolvableIsAnError(t *testing.T) {
	cases := map[string]Options{
		"StreamArn": {Parameters: testOptions.Parameters}, // the table's stream is not known
		"Ref Cert":  {Attributes: testOptions.Attributes}, // a parameter without value
	}
	for want, opts := range cases {
		_, err := Load("testdata", "S-test", opts)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want one naming %s", err, want)
		}
	}
}
