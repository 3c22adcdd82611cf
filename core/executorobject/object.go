// Package executorobject is the executor object of a GitOps revision (kind
// Executor, in executors/<name>.yaml): how a webhook or AWX executor reaches
// the system that updates a fleet's collectors. A fleet names it with
// update.executorRef; a version rollout keeps a snapshot of it, as it keeps
// its policy, so that a later commit changes neither the rollout nor where
// its calls go. Secrets are never in the object: it names them, and the
// executor reads them where the deployment keeps them.
package executorobject

import "time"

// APIVersion and Kind of the YAML object.
const (
	APIVersion = "myriarch.dev/v1alpha1"
	ObjectKind = "Executor"
)

// Types of an executor object: the fleet's update.executor.
const (
	TypeWebhook = "webhook"
	TypeAWX     = "awx"
)

// Defaults.
const (
	DefaultMethod   = "POST"
	DefaultTimeout  = 10 * time.Second
	DefaultRetryFor = 2 * time.Minute
)

// Object is a parsed executor object.
type Object struct {
	Name    string   `json:"name"`
	Path    string   `json:"path,omitempty"`   // file in the revision
	Commit  string   `json:"commit,omitempty"` // revision it was read from
	Type    string   `json:"type"`             // webhook or awx
	Webhook *Webhook `json:"webhook,omitempty"`
	AWX     *AWX     `json:"awx,omitempty"`
}

// Webhook: Start (and Cancel, when enabled) is an HTTP request with a JSON
// body, signed with HMAC-SHA256 and carrying X-Myriarch-Delivery.
type Webhook struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`  // default POST
	Headers map[string]string `json:"headers,omitempty"` // sent as given; no secrets here
	Timeout time.Duration     `json:"timeout,omitempty"` // per request; default 10s
	// RetryFor bounds the retries of 5xx, 429 and timeouts; default 2m.
	RetryFor time.Duration `json:"retryFor,omitempty"`
	// SecretRef names the signing secret (AWS Secrets Manager in the cloud,
	// a file or the environment locally).
	SecretRef string `json:"secretRef"`
	// Cancel sends a cancel request when a started update is withdrawn.
	Cancel bool `json:"cancel,omitempty"`
	// CancelURL receives cancels; default URL.
	CancelURL string `json:"cancelUrl,omitempty"`
}

// AWX: Start launches a job template through AWX's (or Ansible Automation
// Platform's) REST API; Cancel cancels the job.
type AWX struct {
	URL           string `json:"url"` // https://awx.example.com
	JobTemplateID int    `json:"jobTemplateId"`
	// CredentialRef names the secret holding the OAuth2 token AWX accepts
	// as a Bearer token.
	CredentialRef string `json:"credentialRef"`
	// Credentials are AWX credential ids passed to the launch (machine
	// credentials of the job template), if it prompts for them.
	Credentials []int `json:"credentials,omitempty"`
	// ExtraVars are sent as the job's extra_vars; string values are
	// templates: {version}, {from}, {agent}, {host}, {fleet}, {rollout}.
	ExtraVars map[string]any `json:"extraVars,omitempty"`
	// Limit is the job's host limit, a template; default "{host}".
	Limit         string        `json:"limit,omitempty"`
	HostAttribute string        `json:"hostAttribute,omitempty"` // {host}; default host.name
	Timeout       time.Duration `json:"timeout,omitempty"`       // per request; default 10s
	RetryFor      time.Duration `json:"retryFor,omitempty"`      // default 2m
}
