package iam

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed sidecar/evaluate.js
var sidecarScript []byte

// Evaluator answers IAM decisions with @cloud-copilot/iam-simulate, run by
// one node process for the Evaluator's life. Safe for concurrent use.
type Evaluator struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	url    string
	client *http.Client
	dir    string
	exited chan struct{}

	mu    sync.Mutex
	cache map[[32]byte]Decision
}

// Request is one authorization question: may Principal perform Action on
// Resource (an ARN, or "*" for actions without resource-level
// permissions), given the principal's identity policies and the
// resource's policy, if any.
type Request struct {
	Principal        string // a role session ARN, or a service principal such as events.amazonaws.com
	Action           string // "dynamodb:GetItem"
	Resource         string
	Account          string // the resource's account
	IdentityPolicies []json.RawMessage
	ResourcePolicy   json.RawMessage
	Context          map[string]any // condition keys: string or []string values
}

// Decision is the evaluator's answer. Reason is iam-simulate's overall
// result: "Allowed", "ImplicitlyDenied" or "ExplicitlyDenied".
type Decision struct {
	Allowed bool
	Reason  string
}

// StartEvaluator starts the sidecar: node with the embedded script, the
// package found in the repository's node_modules (see nodeModules).
func StartEvaluator(ctx context.Context) (*Evaluator, error) {
	modules, err := nodeModules()
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("iam: node is missing (install Node.js): %w", err)
	}
	dir, err := os.MkdirTemp("", "myriarch-iam-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "evaluate.js")
	if err := os.WriteFile(script, sidecarScript, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e, err := launch(ctx, node, script, modules)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e.dir = dir
	return e, nil
}

// launch runs the script and waits for the port it prints.
func launch(ctx context.Context, node, script, modules string) (*Evaluator, error) {
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("iam: start the evaluator: %w", err)
	}
	e := &Evaluator{cmd: cmd, stdin: stdin, exited: make(chan struct{}), cache: map[[32]byte]Decision{},
		client: &http.Client{Timeout: 30 * time.Second}}
	go func() { cmd.Wait(); close(e.exited) }()
	port, err := readPort(ctx, stdout, e.exited)
	if err != nil {
		stdin.Close()
		cmd.Process.Kill()
		<-e.exited
		return nil, err
	}
	e.url = fmt.Sprintf("http://127.0.0.1:%d/", port)
	go io.Copy(io.Discard, stdout)
	return e, nil
}

func readPort(ctx context.Context, stdout io.Reader, exited <-chan struct{}) (int, error) {
	type result struct {
		port int
		err  error
	}
	got := make(chan result, 1)
	go func() {
		var hello struct{ Port int }
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &hello)
		}
		got <- result{hello.Port, err}
	}()
	select {
	case r := <-got:
		if r.err != nil || r.port == 0 {
			return 0, fmt.Errorf("iam: the evaluator did not start (see its output above): %v", r.err)
		}
		return r.port, nil
	case <-exited:
		return 0, errors.New("iam: the evaluator exited at start (see its output above)")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Close ends the sidecar (closing its stdin ends it) and removes its files.
func (e *Evaluator) Close() error {
	e.stdin.Close()
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
		e.cmd.Process.Kill()
		<-e.exited
	}
	return os.RemoveAll(e.dir)
}

// Decide returns whether the policies allow the request; an explicit deny
// wins over any allow. Answers are cached by the whole request, so a role
// repeating a call is evaluated once.
func (e *Evaluator) Decide(ctx context.Context, req Request) (Decision, error) {
	body, err := json.Marshal(simulationOf(req))
	if err != nil {
		return Decision{}, err
	}
	key := sha256.Sum256(body)
	e.mu.Lock()
	d, ok := e.cache[key]
	e.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err = e.ask(ctx, body)
	if err != nil {
		return Decision{}, fmt.Errorf("iam: %s on %s: %w", req.Action, req.Resource, err)
	}
	e.mu.Lock()
	e.cache[key] = d
	e.mu.Unlock()
	return d, nil
}

// PolicyAllows evaluates a policy as the only identity policy of an
// anonymous caller in the resource's account: what API Gateway does with
// the policy a Lambda authorizer returns (action execute-api:Invoke on the
// method ARN).
func (e *Evaluator) PolicyAllows(ctx context.Context, policy json.RawMessage, action, resource string) (bool, error) {
	account := arnAccount(resource)
	d, err := e.Decide(ctx, Request{
		Principal:        "arn:aws:sts::" + account + ":assumed-role/authorizer/local",
		Action:           action,
		Resource:         resource,
		Account:          account,
		IdentityPolicies: []json.RawMessage{policy},
	})
	return d.Allowed, err
}

func (e *Evaluator) ask(ctx context.Context, body []byte) (Decision, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return Decision{}, err
	}
	resp, err := e.client.Do(hreq)
	if err != nil {
		return Decision{}, fmt.Errorf("the evaluator: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Result string
		Error  json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Decision{}, fmt.Errorf("the evaluator's answer: %w", err)
	}
	if len(out.Error) > 0 || out.Result == "" {
		return Decision{}, fmt.Errorf("the evaluator refused the simulation: %s", out.Error)
	}
	return Decision{Allowed: out.Result == "Allowed", Reason: out.Result}, nil
}

// simulation is iam-simulate's Simulation object.
type simulation struct {
	Request struct {
		Principal string `json:"principal"`
		Action    string `json:"action"`
		Resource  struct {
			Resource  string `json:"resource"`
			AccountID string `json:"accountId"`
		} `json:"resource"`
		ContextVariables map[string]any `json:"contextVariables"`
	} `json:"request"`
	IdentityPolicies        []namedPolicy   `json:"identityPolicies"`
	ServiceControlPolicies  []any           `json:"serviceControlPolicies"`
	ResourceControlPolicies []any           `json:"resourceControlPolicies"`
	ResourcePolicy          json.RawMessage `json:"resourcePolicy,omitempty"`
}

type namedPolicy struct {
	Name   string          `json:"name"`
	Policy json.RawMessage `json:"policy"`
}

func simulationOf(req Request) simulation {
	var s simulation
	s.Request.Principal = req.Principal
	s.Request.Action = req.Action
	s.Request.Resource.Resource = req.Resource
	s.Request.Resource.AccountID = req.Account
	s.Request.ContextVariables = req.Context
	if s.Request.ContextVariables == nil {
		s.Request.ContextVariables = map[string]any{}
	}
	s.IdentityPolicies = make([]namedPolicy, len(req.IdentityPolicies))
	for i, p := range req.IdentityPolicies {
		s.IdentityPolicies[i] = namedPolicy{Name: fmt.Sprintf("policy%d", i+1), Policy: p}
	}
	s.ServiceControlPolicies, s.ResourceControlPolicies = []any{}, []any{}
	s.ResourcePolicy = req.ResourcePolicy
	return s
}

// arnAccount is the account field of an ARN ("" when it has none).
func arnAccount(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}
