// Package executortest holds the documents of the executor object parser's
// tests with what the parser must say of each, so that another test can run
// on the same documents: core/executorobject's tests check the parser against
// them, and api/schema's test checks that the JSON Schema agrees with the
// parser. A row added here is checked by both.
package executortest

import (
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/executorobject"
)

// Doc wraps spec lines into an Executor document named edge-hook.
func Doc(spec string) string {
	return "apiVersion: myriarch.dev/v1alpha1\nkind: Executor\nmetadata: {name: edge-hook}\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n"
}

// Valid specs.
const (
	MinimalWebhook = `type: webhook
webhook: {url: "https://deploy.example.com/myriarch", secretRef: edge-hook}`

	Webhook = `
type: webhook
webhook:
  url: https://deploy.example.com/myriarch/start
  method: PUT
  headers: {X-Team: observability}
  timeout: 5s
  retryFor: 1m
  secretRef: webhooks/edge
  cancel: true
  cancelUrl: https://deploy.example.com/myriarch/cancel`

	// CancelWebhook sends cancels to its url.
	CancelWebhook = `type: webhook
webhook: {url: "https://a.example/x", secretRef: s, cancel: true}`

	AWX = `
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
  retryFor: 5m`

	MinimalAWX = "type: awx\nawx: {url: https://awx.example.com, jobTemplateId: 1, credentialRef: t}"
)

// Alias is an object that would be valid but for an alias (*u), which the
// parser refuses: one yaml_invalid at spec.awx.extraVars.b.
const Alias = "type: awx\nawx:\n  url: &u https://a.example\n  jobTemplateId: 1\n  credentialRef: t\n  extraVars: {a: [x, x], b: *u}"

// Issue is a document with a problem: among its issues is one with Code at
// Path, a warning when Warn (the object stays valid), else an error.
type Issue struct {
	Name, Data string
	Code, Path string
	Warn       bool
}

const (
	hook = "type: webhook\nwebhook:\n  secretRef: s\n  "
)

// Issues are every rule, with its code and path.
var Issues = []Issue{
	{"not YAML", "spec: [", executorobject.CodeYAMLInvalid, "", false},
	{"empty", "", executorobject.CodeYAMLInvalid, "", false},
	{"two documents", Doc(MinimalWebhook) + "---\n" + Doc(MinimalWebhook), executorobject.CodeYAMLInvalid, "", false},
	{"a list", "- a\n", executorobject.CodeYAMLInvalid, "", false},
	{"apiVersion missing", "kind: Executor\nmetadata: {name: x}\nspec: {type: webhook, webhook: {url: 'https://a.example', secretRef: s}}", executorobject.CodeAPIVersionInvalid, "apiVersion", false},
	{"apiVersion wrong", strings.Replace(Doc(MinimalWebhook), "v1alpha1", "v2", 1), executorobject.CodeAPIVersionInvalid, "apiVersion", false},
	{"kind wrong", strings.Replace(Doc(MinimalWebhook), "kind: Executor", "kind: Fleet", 1), executorobject.CodeKindInvalid, "kind", false},
	{"name missing", strings.Replace(Doc(MinimalWebhook), "{name: edge-hook}", "{}", 1), executorobject.CodeNameInvalid, "metadata.name", false},
	{"name not a name", strings.Replace(Doc(MinimalWebhook), "edge-hook}", "Edge_Hook}", 1), executorobject.CodeNameInvalid, "metadata.name", false},
	{"unknown top-level key", Doc(MinimalWebhook) + "status: {}\n", executorobject.CodeUnknownField, "status", false},
	{"unknown spec key", Doc(MinimalWebhook + "\nretries: 3"), executorobject.CodeUnknownField, "spec.retries", false},
	{"unknown webhook key", Doc(hook + "url: https://a.example\n  secret: s"), executorobject.CodeUnknownField, "spec.webhook.secret", false},
	{"unknown awx key", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, template: 2}"), executorobject.CodeUnknownField, "spec.awx.template", false},
	{"key twice", Doc(hook + "url: https://a.example\n  url: https://b.example"), executorobject.CodeYAMLInvalid, "spec.webhook.url", false},
	{"merge key", Doc("type: webhook\nbase: &b {url: 'https://a.example', secretRef: s}\nwebhook: {<<: *b}"), executorobject.CodeUnknownField, "spec.base", false},
	{"type missing", Doc("webhook: {url: 'https://a.example', secretRef: s}"), executorobject.CodeInvalid, "spec.type", false},
	{"type unknown", Doc("type: ansible"), executorobject.CodeInvalid, "spec.type", false},
	{"type empty", Doc(`type: ""` + "\nwebhook: {url: 'https://a.example', secretRef: s}"), executorobject.CodeInvalid, "spec.type", false},
	{"webhook block missing", Doc("type: webhook"), executorobject.CodeInvalid, "spec.webhook", false},
	{"awx block with type webhook", Doc(MinimalWebhook + "\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t}"), executorobject.CodeInvalid, "spec.awx", false},
	{"webhook not a mapping", Doc("type: webhook\nwebhook: https://a.example"), executorobject.CodeTypeInvalid, "spec.webhook", false},
	{"url missing", Doc(hook + "method: POST"), executorobject.CodeInvalid, "spec.webhook.url", false},
	{"url not http", Doc(hook + "url: ftp://a.example/x"), executorobject.CodeInvalid, "spec.webhook.url", false},
	{"url relative", Doc(hook + "url: /hooks/x"), executorobject.CodeInvalid, "spec.webhook.url", false},
	{"url with a password", Doc(hook + "url: https://u:p@a.example/x"), executorobject.CodeInvalid, "spec.webhook.url", false},
	{"url with a fragment", Doc(hook + "url: https://a.example/x#y"), executorobject.CodeInvalid, "spec.webhook.url", false},
	{"url plain http", Doc(hook + "url: http://deploy.example.com/x"), executorobject.CodeInvalid, "spec.webhook.url", true},
	{"url a list", Doc(hook + "url: [a]"), executorobject.CodeTypeInvalid, "spec.webhook.url", false},
	{"method GET", Doc(hook + "url: https://a.example\n  method: GET"), executorobject.CodeInvalid, "spec.webhook.method", false},
	{"method lower case", Doc(hook + "url: https://a.example\n  method: post"), executorobject.CodeInvalid, "spec.webhook.method", false},
	{"method empty", Doc(hook + "url: https://a.example\n  method: ''"), executorobject.CodeInvalid, "spec.webhook.method", false},
	{"header X-Myriarch", Doc(hook + "url: https://a.example\n  headers: {x-myriarch-delivery: x}"), executorobject.CodeInvalid, `spec.webhook.headers["x-myriarch-delivery"]`, false},
	{"header Authorization", Doc(hook + "url: https://a.example\n  headers: {Authorization: Bearer x}"), executorobject.CodeInvalid, "spec.webhook.headers.Authorization", false},
	{"header Content-Type", Doc(hook + "url: https://a.example\n  headers: {Content-Type: text/plain}"), executorobject.CodeInvalid, `spec.webhook.headers["Content-Type"]`, false},
	{"header name with a space", Doc(hook + "url: https://a.example\n  headers: {'X Team': a}"), executorobject.CodeInvalid, `spec.webhook.headers["X Team"]`, false},
	{"header value with a line break", Doc(hook + "url: https://a.example\n  headers: {X-Team: \"a\\r\\nX-Evil: b\"}"), executorobject.CodeInvalid, `spec.webhook.headers["X-Team"]`, false},
	{"header value a number", Doc(hook + "url: https://a.example\n  headers: {X-Team: 12}"), executorobject.CodeTypeInvalid, `spec.webhook.headers["X-Team"]`, false},
	{"timeout zero", Doc(hook + "url: https://a.example\n  timeout: 0s"), executorobject.CodeInvalid, "spec.webhook.timeout", false},
	{"timeout negative", Doc(hook + "url: https://a.example\n  timeout: -1s"), executorobject.CodeInvalid, "spec.webhook.timeout", false},
	{"timeout without a unit", Doc(hook + "url: https://a.example\n  timeout: 10"), executorobject.CodeTypeInvalid, "spec.webhook.timeout", false},
	{"timeout unreadable", Doc(hook + "url: https://a.example\n  timeout: 1d"), executorobject.CodeInvalid, "spec.webhook.timeout", false},
	{"timeout too long", Doc(hook + "url: https://a.example\n  timeout: 5m"), executorobject.CodeInvalid, "spec.webhook.timeout", false},
	{"retryFor zero", Doc(hook + "url: https://a.example\n  retryFor: 0s"), executorobject.CodeInvalid, "spec.webhook.retryFor", false},
	{"retryFor too long", Doc(hook + "url: https://a.example\n  retryFor: 1h"), executorobject.CodeInvalid, "spec.webhook.retryFor", false},
	{"secretRef missing", Doc("type: webhook\nwebhook: {url: 'https://a.example'}"), executorobject.CodeInvalid, "spec.webhook.secretRef", false},
	{"secretRef with ..", Doc("type: webhook\nwebhook: {url: 'https://a.example', secretRef: ../etc/passwd}"), executorobject.CodeInvalid, "spec.webhook.secretRef", false},
	{"secretRef absolute", Doc("type: webhook\nwebhook: {url: 'https://a.example', secretRef: /etc/passwd}"), executorobject.CodeInvalid, "spec.webhook.secretRef", false},
	{"cancel not a boolean", Doc(hook + "url: https://a.example\n  cancel: yes please"), executorobject.CodeTypeInvalid, "spec.webhook.cancel", false},
	{"cancelUrl not http", Doc(hook + "url: https://a.example\n  cancel: true\n  cancelUrl: mailto:a@b"), executorobject.CodeInvalid, "spec.webhook.cancelUrl", false},
	{"cancelUrl without cancel", Doc(hook + "url: https://a.example\n  cancelUrl: https://a.example/c"), executorobject.CodeInvalid, "spec.webhook.cancelUrl", true},
	{"awx block missing", Doc("type: awx"), executorobject.CodeInvalid, "spec.awx", false},
	{"awx url missing", Doc("type: awx\nawx: {jobTemplateId: 1, credentialRef: t}"), executorobject.CodeInvalid, "spec.awx.url", false},
	{"jobTemplateId missing", Doc("type: awx\nawx: {url: https://a.example, credentialRef: t}"), executorobject.CodeInvalid, "spec.awx.jobTemplateId", false},
	{"jobTemplateId 0", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 0, credentialRef: t}"), executorobject.CodeInvalid, "spec.awx.jobTemplateId", false},
	{"jobTemplateId a string", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: '7', credentialRef: t}"), executorobject.CodeTypeInvalid, "spec.awx.jobTemplateId", false},
	{"credentialRef missing", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1}"), executorobject.CodeInvalid, "spec.awx.credentialRef", false},
	{"credential 0", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: [0]}"), executorobject.CodeInvalid, "spec.awx.credentials[0]", false},
	{"credential twice", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: [4, 4]}"), executorobject.CodeInvalid, "spec.awx.credentials[1]", false},
	{"credentials not a list", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, credentials: 4}"), executorobject.CodeTypeInvalid, "spec.awx.credentials", false},
	{"extraVars not a mapping", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, extraVars: [a]}"), executorobject.CodeTypeInvalid, "spec.awx.extraVars", false},
	{"extraVars with a binary", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, extraVars: {b: !!binary aGk=}}"), executorobject.CodeYAMLTagInvalid, "spec.awx.extraVars.b", false},
	{"limit empty", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, limit: ''}"), executorobject.CodeInvalid, "spec.awx.limit", false},
	{"hostAttribute empty", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, hostAttribute: ''}"), executorobject.CodeInvalid, "spec.awx.hostAttribute", false},
	{"awx timeout zero", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t, timeout: 0s}"), executorobject.CodeInvalid, "spec.awx.timeout", false},
	{"webhook block with type awx", Doc("type: awx\nawx: {url: https://a.example, jobTemplateId: 1, credentialRef: t}\nwebhook: {url: 'https://a.example', secretRef: s}"), executorobject.CodeInvalid, "spec.webhook", false},
}

// Case is one document of the tables above, named by its table and row.
type Case struct{ Name, Doc string }

// All is every document above, valid or not, for tests that run something
// else on the same documents.
func All() []Case {
	out := []Case{
		{"MinimalWebhook", Doc(MinimalWebhook)}, {"Webhook", Doc(Webhook)}, {"CancelWebhook", Doc(CancelWebhook)},
		{"AWX", Doc(AWX)}, {"MinimalAWX", Doc(MinimalAWX)}, {"Alias", Doc(Alias)},
	}
	for i, c := range Issues {
		out = append(out, Case{"Issues[" + strconv.Itoa(i) + "] " + c.Name, c.Data})
	}
	return out
}
