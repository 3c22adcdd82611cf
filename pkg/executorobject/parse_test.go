package executorobject

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/issue"
)

// doc wraps spec lines into an Executor document named edge-hook.
func doc(spec string) []byte {
	return []byte("apiVersion: myriarch.dev/v1alpha1\nkind: Executor\nmetadata: {name: edge-hook}\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n")
}

const minimalWebhook = `type: webhook
webhook: {url: "https://deploy.example.com/myriarch", secretRef: edge-hook}`

func TestParse_Webhook(t *testing.T) {
	o, issues := Parse(doc(`
type: webhook
webhook:
  url: https://deploy.example.com/myriarch/start
  method: PUT
  headers: {X-Team: observability}
  timeout: 5s
  retryFor: 1m
  secretRef: webhooks/edge
  cancel: true
  cancelUrl: https://deploy.example.com/myriarch/cancel`))
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	want := Object{Name: "edge-hook", Type: TypeWebhook, Webhook: &Webhook{
		URL: "https://deploy.example.com/myriarch/start", Method: "PUT", Headers: map[string]string{"X-Team": "observability"},
		Timeout: 5 * time.Second, RetryFor: time.Minute, SecretRef: "webhooks/edge", Cancel: true, CancelURL: "https://deploy.example.com/myriarch/cancel",
	}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", *o.Webhook, *want.Webhook)
	}
}

// The defaults are filled in, so that a snapshot says what its calls do.
func TestParse_WebhookDefaults(t *testing.T) {
	o, issues := Parse(doc(minimalWebhook))
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	w := *o.Webhook
	if w.Method != "POST" || w.Timeout != 10*time.Second || w.RetryFor != 2*time.Minute || w.Cancel || w.CancelURL != "" {
		t.Errorf("defaults %+v, want POST, 10s, 2m, no cancel", w)
	}
	o, _ = Parse(doc(minimalWebhook + "\n" + `webhook2: {}`))
	if o.Webhook == nil {
		t.Fatal("an unknown key must not lose the rest")
	}
	o, _ = Parse(doc(`type: webhook
webhook: {url: "https://a.example/x", secretRef: s, cancel: true}`))
	if o.Webhook.CancelURL != "https://a.example/x" {
		t.Errorf("cancelUrl %q, want the url when cancels are sent", o.Webhook.CancelURL)
	}
}

func TestParse_AWX(t *testing.T) {
	o, issues := Parse(doc(`
type: awx
awx:
  url: https://awx.example.com
  jobTemplateId: 42
  credentialRef: awx-token
  credentials: [3, 7]
  extraVars: {collector_version: "{version}", restart: true, retries: 2, hosts: [a, b], nested: {k: v}, none: null}
  limit: "{host}"
  hostAttribute: host.fqdn
  timeout: 20s
  retryFor: 5m`))
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	want := &AWX{URL: "https://awx.example.com", JobTemplateID: 42, CredentialRef: "awx-token", Credentials: []int{3, 7},
		ExtraVars: map[string]any{"collector_version": "{version}", "restart": true, "retries": 2, "hosts": []any{"a", "b"},
			"nested": map[string]any{"k": "v"}, "none": nil},
		Limit: "{host}", HostAttribute: "host.fqdn", Timeout: 20 * time.Second, RetryFor: 5 * time.Minute}
	if !reflect.DeepEqual(o.AWX, want) || o.Type != TypeAWX || o.Webhook != nil {
		t.Errorf("Parse =\n%+v\nwant\n%+v", o.AWX, want)
	}
	o, issues = Parse(doc("type: awx\nawx: {url: https://awx.example.com, jobTemplateId: 1, credentialRef: t}"))
	if a := o.AWX; len(issues) != 0 || a.Limit != "{host}" || a.HostAttribute != "host.name" || a.Timeout != 10*time.Second || a.RetryFor != 2*time.Minute {
		t.Errorf("defaults %+v, issues %v", a, issues)
	}
}

// Every rule, with its code and path; severity error unless warn.
func TestParse_Issues(t *testing.T) {
	const hook = "type: webhook\nwebhook:\n  secretRef: s\n  "
	tests := []struct {
		name, data string
		code, path string
		warn       bool
	}{
		{"not YAML", "spec: [", CodeYAMLInvalid, "", false},
		{"empty", "", CodeYAMLInvalid, "", false},
		{"two documents", string(doc(minimalWebhook)) + "---\n" + string(doc(minimalWebhook)), CodeYAMLInvalid, "", false},
		{"a list", "- a\n", CodeYAMLInvalid, "", false},
		{"apiVersion missing", "kind: Executor\nmetadata: {name: x}\nspec: {type: webhook, webhook: {url: 'https://a.example', secretRef: s}}", CodeAPIVersionInvalid, "apiVersion", false},
		{"apiVersion wrong", strings.Replace(string(doc(minimalWebhook)), "v1alpha1", "v2", 1), CodeAPIVersionInvalid, "apiVersion", false},
		{"kind wrong", strings.Replace(string(doc(minimalWebhook)), "kind: Executor", "kind: Fleet", 1), CodeKindInvalid, "kind", false},
		{"name missing", strings.Replace(string(doc(minimalWebhook)), "{name: edge-hook}", "{}", 1), CodeNameInvalid, "metadata.name", false},
		{"name not a name", strings.Replace(string(doc(minimalWebhook)), "edge-hook}", "Edge_Hook}", 1), CodeNameInvalid, "metadata.name", false},
		{"unknown top-level key", string(doc(minimalWebhook)) + "status: {}\n", CodeUnknownField, "status", false},
		{"unknown spec key", string(doc(minimalWebhook + "\nretries: 3")), CodeUnknownField, "spec.retries", false},
		{"unknown webhook key", string(doc(hook + "url: https://a.example\n  secret: s")), CodeUnknownField, "spec.webhook.secret", false},
		{"unknown awx key", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, template: 2}")), CodeUnknownField, "spec.awx.template", false},
		{"key twice", string(doc(hook + "url: https://a.example\n  url: https://b.example")), CodeYAMLInvalid, "spec.webhook.url", false},
		{"merge key", string(doc("type: webhook\nbase: &b {url: 'https://a.example', secretRef: s}\nwebhook: {<<: *b}")), CodeUnknownField, "spec.base", false},
		{"type missing", string(doc("webhook: {url: 'https://a.example', secretRef: s}")), CodeInvalid, "spec.type", false},
		{"type unknown", string(doc("type: ansible")), CodeInvalid, "spec.type", false},
		{"type empty", string(doc(`type: ""` + "\nwebhook: {url: 'https://a.example', secretRef: s}")), CodeInvalid, "spec.type", false},
		{"webhook block missing", string(doc("type: webhook")), CodeInvalid, "spec.webhook", false},
		{"awx block with type webhook", string(doc(minimalWebhook + "\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t}")), CodeInvalid, "spec.awx", false},
		{"webhook not a mapping", string(doc("type: webhook\nwebhook: https://a.example")), CodeTypeInvalid, "spec.webhook", false},
		{"url missing", string(doc(hook + "method: POST")), CodeInvalid, "spec.webhook.url", false},
		{"url not http", string(doc(hook + "url: ftp://a.example/x")), CodeInvalid, "spec.webhook.url", false},
		{"url relative", string(doc(hook + "url: /hooks/x")), CodeInvalid, "spec.webhook.url", false},
		{"url with a password", string(doc(hook + "url: https://u:p@a.example/x")), CodeInvalid, "spec.webhook.url", false},
		{"url with a fragment", string(doc(hook + "url: https://a.example/x#y")), CodeInvalid, "spec.webhook.url", false},
		{"url plain http", string(doc(hook + "url: http://deploy.example.com/x")), CodeInvalid, "spec.webhook.url", true},
		{"url a list", string(doc(hook + "url: [a]")), CodeTypeInvalid, "spec.webhook.url", false},
		{"method GET", string(doc(hook + "url: https://a.example\n  method: GET")), CodeInvalid, "spec.webhook.method", false},
		{"method lower case", string(doc(hook + "url: https://a.example\n  method: post")), CodeInvalid, "spec.webhook.method", false},
		{"method empty", string(doc(hook + "url: https://a.example\n  method: ''")), CodeInvalid, "spec.webhook.method", false},
		{"header X-Myriarch", string(doc(hook + "url: https://a.example\n  headers: {x-myriarch-delivery: x}")), CodeInvalid, `spec.webhook.headers["x-myriarch-delivery"]`, false},
		{"header Authorization", string(doc(hook + "url: https://a.example\n  headers: {Authorization: Bearer x}")), CodeInvalid, "spec.webhook.headers.Authorization", false},
		{"header Content-Type", string(doc(hook + "url: https://a.example\n  headers: {Content-Type: text/plain}")), CodeInvalid, `spec.webhook.headers["Content-Type"]`, false},
		{"header name with a space", string(doc(hook + "url: https://a.example\n  headers: {'X Team': a}")), CodeInvalid, `spec.webhook.headers["X Team"]`, false},
		{"header value with a line break", string(doc(hook + "url: https://a.example\n  headers: {X-Team: \"a\\r\\nX-Evil: b\"}")), CodeInvalid, `spec.webhook.headers["X-Team"]`, false},
		{"header value a number", string(doc(hook + "url: https://a.example\n  headers: {X-Team: 12}")), CodeTypeInvalid, `spec.webhook.headers["X-Team"]`, false},
		{"timeout zero", string(doc(hook + "url: https://a.example\n  timeout: 0s")), CodeInvalid, "spec.webhook.timeout", false},
		{"timeout negative", string(doc(hook + "url: https://a.example\n  timeout: -1s")), CodeInvalid, "spec.webhook.timeout", false},
		{"timeout without a unit", string(doc(hook + "url: https://a.example\n  timeout: 10")), CodeTypeInvalid, "spec.webhook.timeout", false},
		{"timeout unreadable", string(doc(hook + "url: https://a.example\n  timeout: 1d")), CodeInvalid, "spec.webhook.timeout", false},
		{"timeout too long", string(doc(hook + "url: https://a.example\n  timeout: 5m")), CodeInvalid, "spec.webhook.timeout", false},
		{"retryFor zero", string(doc(hook + "url: https://a.example\n  retryFor: 0s")), CodeInvalid, "spec.webhook.retryFor", false},
		{"retryFor too long", string(doc(hook + "url: https://a.example\n  retryFor: 1h")), CodeInvalid, "spec.webhook.retryFor", false},
		{"secretRef missing", string(doc("type: webhook\nwebhook: {url: 'https://a.example'}")), CodeInvalid, "spec.webhook.secretRef", false},
		{"secretRef with ..", string(doc("type: webhook\nwebhook: {url: 'https://a.example', secretRef: ../etc/passwd}")), CodeInvalid, "spec.webhook.secretRef", false},
		{"secretRef absolute", string(doc("type: webhook\nwebhook: {url: 'https://a.example', secretRef: /etc/passwd}")), CodeInvalid, "spec.webhook.secretRef", false},
		{"cancel not a boolean", string(doc(hook + "url: https://a.example\n  cancel: yes please")), CodeTypeInvalid, "spec.webhook.cancel", false},
		{"cancelUrl not http", string(doc(hook + "url: https://a.example\n  cancel: true\n  cancelUrl: mailto:a@b")), CodeInvalid, "spec.webhook.cancelUrl", false},
		{"cancelUrl without cancel", string(doc(hook + "url: https://a.example\n  cancelUrl: https://a.example/c")), CodeInvalid, "spec.webhook.cancelUrl", true},
		{"awx block missing", string(doc("type: awx")), CodeInvalid, "spec.awx", false},
		{"awx url missing", string(doc("type: awx\nawx: {jobTemplateId: 1, credentialRef: t}")), CodeInvalid, "spec.awx.url", false},
		{"jobTemplateId missing", string(doc("type: awx\nawx: {url: https://a.example, credentialRef: t}")), CodeInvalid, "spec.awx.jobTemplateId", false},
		{"jobTemplateId 0", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 0, credentialRef: t}")), CodeInvalid, "spec.awx.jobTemplateId", false},
		{"jobTemplateId a string", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: '7', credentialRef: t}")), CodeTypeInvalid, "spec.awx.jobTemplateId", false},
		{"credentialRef missing", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1}")), CodeInvalid, "spec.awx.credentialRef", false},
		{"credential 0", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: [0]}")), CodeInvalid, "spec.awx.credentials[0]", false},
		{"credential twice", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: [4, 4]}")), CodeInvalid, "spec.awx.credentials[1]", false},
		{"credentials not a list", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: 4}")), CodeTypeInvalid, "spec.awx.credentials", false},
		{"extraVars not a mapping", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, extraVars: [a]}")), CodeTypeInvalid, "spec.awx.extraVars", false},
		{"extraVars with a binary", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, extraVars: {b: !!binary aGk=}}")), CodeTypeInvalid, "spec.awx.extraVars.b", false},
		{"limit empty", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, limit: ''}")), CodeInvalid, "spec.awx.limit", false},
		{"hostAttribute empty", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, hostAttribute: ''}")), CodeInvalid, "spec.awx.hostAttribute", false},
		{"awx timeout zero", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, timeout: 0s}")), CodeInvalid, "spec.awx.timeout", false},
		{"webhook block with type awx", string(doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t}\nwebhook: {url: 'https://a.example', secretRef: s}")), CodeInvalid, "spec.webhook", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, issues := Parse([]byte(tc.data))
			found := false
			for _, is := range issues {
				if is.Code == tc.code && is.Path == tc.path && (is.Severity == issue.Warning) == tc.warn {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s (warning %v) at %q in\n%v", tc.code, tc.warn, tc.path, issues)
			}
			if !tc.warn && !issues.HasErrors() {
				t.Fatal("the object must be invalid")
			}
		})
	}
}

// A value that cannot be read is reported once, not again by Validate.
func TestParse_ReadFailureReportedOnce(t *testing.T) {
	_, issues := Parse(doc("type: webhook\nwebhook: {url: [a], secretRef: s}"))
	if len(issues) != 1 || issues[0].Code != CodeTypeInvalid {
		t.Fatalf("issues %v, want only the type error of url", issues)
	}
	_, issues = Parse(doc("type: webhook\nwebhook: 12"))
	if len(issues) != 1 || issues[0].Path != "spec.webhook" {
		t.Fatalf("issues %v, want only the type error of spec.webhook", issues)
	}
}

// Aliases are refused: a small document cannot expand into a large one.
func TestParse_AliasRefused(t *testing.T) {
	_, issues := Parse(doc("type: awx\nawx:\n  url: &u https://a.example\n  jobTemplateId: 1\n  credentialRef: t\n  extraVars: {a: [x, x], b: *u}"))
	if len(issues) != 1 || issues[0].Code != CodeYAMLInvalid || issues[0].Path != "spec.awx.extraVars.b" {
		t.Fatalf("issues %v, want one yaml_invalid for the alias", issues)
	}
}

func TestValidSecretRef(t *testing.T) {
	for name, want := range map[string]bool{
		"edge-hook": true, "webhooks/edge": true, "a.b_c+d=e@f": true,
		"": false, "/abs": false, "a/../b": false, "..": false, "a//b": false, "trailing/": false, "sp ace": false, "./a": false,
	} {
		if got := ValidSecretRef(name); got != want {
			t.Errorf("ValidSecretRef(%q) = %v, want %v", name, got, want)
		}
	}
}
