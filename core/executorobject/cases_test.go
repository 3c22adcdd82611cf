package executorobject_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/executorobject/executortest"
	"github.com/myriarch/myriarch/core/issue"
)

// The documents are in executortest, which api/schema's test shares: there
// the JSON Schema must agree with the parser on every one of them.

func parse(spec string) (executorobject.Object, issue.List) {
	return executorobject.Parse([]byte(executortest.Doc(spec)))
}

func TestParse_Webhook(t *testing.T) {
	o, issues := parse(executortest.Webhook)
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	want := executorobject.Object{Name: "edge-hook", Type: executorobject.TypeWebhook, Webhook: &executorobject.Webhook{
		URL: "https://deploy.example.com/myriarch/start", Method: "PUT", Headers: map[string]string{"X-Team": "observability"},
		Timeout: 5 * time.Second, RetryFor: time.Minute, SecretRef: "webhooks/edge", Cancel: true, CancelURL: "https://deploy.example.com/myriarch/cancel",
	}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", *o.Webhook, *want.Webhook)
	}
}

// The defaults are filled in, so that a snapshot says what its calls do.
func TestParse_WebhookDefaults(t *testing.T) {
	o, issues := parse(executortest.MinimalWebhook)
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	w := *o.Webhook
	if w.Method != "POST" || w.Timeout != 10*time.Second || w.RetryFor != 2*time.Minute || w.Cancel || w.CancelURL != "" {
		t.Errorf("defaults %+v, want POST, 10s, 2m, no cancel", w)
	}
	o, _ = parse(executortest.MinimalWebhook + "\n" + `webhook2: {}`)
	if o.Webhook == nil {
		t.Fatal("an unknown key must not lose the rest")
	}
	o, _ = parse(executortest.CancelWebhook)
	if o.Webhook.CancelURL != "https://a.example/x" {
		t.Errorf("cancelUrl %q, want the url when cancels are sent", o.Webhook.CancelURL)
	}
}

func TestParse_AWX(t *testing.T) {
	o, issues := parse(executortest.AWX)
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	want := &executorobject.AWX{URL: "https://awx.example.com", JobTemplateID: 42, CredentialRef: "awx-token", Credentials: []int{3, 7},
		ExtraVars: map[string]any{"collector_version": "{version}", "restart": true, "retries": 2, "hosts": []any{"a", "b"},
			"nested": map[string]any{"k": "v"}, "none": nil},
		Limit: "{host}", HostAttribute: "host.fqdn", Timeout: 20 * time.Second, RetryFor: 5 * time.Minute}
	if !reflect.DeepEqual(o.AWX, want) || o.Type != executorobject.TypeAWX || o.Webhook != nil {
		t.Errorf("Parse =\n%+v\nwant\n%+v", o.AWX, want)
	}
	o, issues = parse(executortest.MinimalAWX)
	if a := o.AWX; len(issues) != 0 || a.Limit != "{host}" || a.HostAttribute != "host.name" || a.Timeout != 10*time.Second || a.RetryFor != 2*time.Minute {
		t.Errorf("defaults %+v, issues %v", a, issues)
	}
}

// Every rule, with its code and path; severity error unless warn.
func TestParse_Issues(t *testing.T) {
	for _, tc := range executortest.Issues {
		t.Run(tc.Name, func(t *testing.T) {
			_, issues := executorobject.Parse([]byte(tc.Data))
			found := false
			for _, is := range issues {
				if is.Code == tc.Code && is.Path == tc.Path && (is.Severity == issue.Warning) == tc.Warn {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s (warning %v) at %q in\n%v", tc.Code, tc.Warn, tc.Path, issues)
			}
			if !tc.Warn && !issues.HasErrors() {
				t.Fatal("the object must be invalid")
			}
		})
	}
}

// Aliases are refused: a small document cannot expand into a large one.
func TestParse_AliasRefused(t *testing.T) {
	_, issues := parse(executortest.Alias)
	if len(issues) != 1 || issues[0].Code != executorobject.CodeYAMLInvalid || issues[0].Path != "spec.awx.extraVars.b" {
		t.Fatalf("issues %v, want one yaml_invalid for the alias", issues)
	}
}
