package iam

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
)

// Proxy is the endpoint every AWS client of the local cloud calls
// (AWS_ENDPOINT_URL). Each request is held to its role's policies: the
// role is the SigV4 access key id, the service the signing name. Every
// access the request needs is evaluated and recorded; the first denied
// one is answered with AccessDenied in the service's protocol; a request
// whose accesses are all allowed goes, body intact, to the backend of its
// service. A request the proxy cannot understand (no signature, a key
// that is no role, an unknown operation) is denied and recorded.
type Proxy struct {
	Policies  *Policies
	Evaluator *Evaluator
	// Backends by signing service name: "dynamodb" (DynamoDB Streams too),
	// "states", "lambda", "events", "secretsmanager", "monitoring", "sqs".
	Backends map[string]http.Handler
	Record   *Recorder
	Log      *slog.Logger

	// SecretArn resolves a SecretId to its ARN (the secrets backend knows
	// the real ones); nil resolves the template's secrets by name and
	// leaves ARNs as they are (DefaultSecretArn).
	SecretArn func(secretID string) string
	// TaskTokenStateMachine names the state machine a task token belongs
	// to; nil evaluates SendTask* on "*" (see statesAccesses).
	TaskTokenStateMachine func(token string) (string, bool)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "iam proxy: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	cred, err := parseCredential(r)
	if err != nil {
		p.refuse(w, r, cred.Service, Call{Action: r.Method + " " + r.URL.Path, Error: err.Error()})
		return
	}
	role := p.Policies.Roles[cred.AccessKeyID]
	if role == nil {
		p.refuse(w, r, cred.Service, Call{Role: cred.AccessKeyID, Action: cred.Service,
			Error: fmt.Sprintf("the access key id %q is not the logical id of a role in the template", cred.AccessKeyID)})
		return
	}
	op, err := Derive(p.scope(), cred.Service, r, body)
	if err != nil {
		p.refuse(w, r, cred.Service, Call{Role: role.LogicalID, Action: op.Name, Error: err.Error()})
		return
	}
	if denied := p.authorize(r, role, op); denied != "" {
		writeDenied(w, r, cred.Service, denied)
		return
	}
	p.forward(w, r, cred.Service, body)
}

// authorize evaluates and records every access of the operation, and
// returns the AccessDenied message of the first one denied ("" when all
// are allowed).
func (p *Proxy) authorize(r *http.Request, role *Role, op Operation) string {
	session := role.SessionArn(p.Policies.Partition, p.Policies.Account)
	denied := ""
	for _, a := range op.Accesses {
		req := Request{Principal: session, Action: a.Action, Resource: a.Resource, Account: p.Policies.Account,
			IdentityPolicies: role.IdentityPolicies()}
		var err error
		if evaluatedOnResource[a.Action] && a.Resource != "*" {
			req.Resource = "*"
			req.IdentityPolicies, err = narrowedTo(req.IdentityPolicies, a.Resource)
		}
		var d Decision
		if err == nil {
			d, err = p.Evaluator.Decide(r.Context(), req)
		}
		call := Call{Role: role.LogicalID, Action: a.Action, Resource: a.Resource, Allowed: d.Allowed}
		msg := ""
		if err != nil {
			call.Error, msg = err.Error(), "User: "+session+" is not authorized to perform: "+a.Action+" on resource: "+a.Resource+" (the local cloud could not evaluate it: "+err.Error()+")"
		} else if !d.Allowed {
			msg = deniedMessage(session, a, d)
		}
		p.record(call)
		if msg != "" && denied == "" {
			p.log().Warn("iam: denied", "role", role.LogicalID, "operation", op.Name, "action", a.Action, "resource", a.Resource, "reason", d.Reason, "error", call.Error)
			denied = msg
		}
	}
	return denied
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, service string, body []byte) {
	backend := p.Backends[service]
	if backend == nil {
		http.Error(w, "iam proxy: no backend for the service "+service, http.StatusBadGateway)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	backend.ServeHTTP(w, r)
}

// refuse denies a request the proxy could not evaluate, and records it.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, service string, c Call) {
	p.record(c)
	p.log().Warn("iam: refused", "role", c.Role, "operation", c.Action, "error", c.Error)
	writeDenied(w, r, service, "iam proxy: "+c.Error)
}

func (p *Proxy) record(c Call) {
	if p.Record == nil {
		return
	}
	if err := p.Record.Record(c); err != nil {
		p.log().Error("iam: recording a call", "error", err)
	}
}

func (p *Proxy) scope() Scope {
	s := Scope{Partition: p.Policies.Partition, Region: p.Policies.Region, Account: p.Policies.Account,
		SecretArn: p.SecretArn, TaskTokenStateMachine: p.TaskTokenStateMachine}
	if s.SecretArn == nil {
		s.SecretArn = func(id string) string { return DefaultSecretArn(s, p.Policies.secrets, id) }
	}
	return s
}

func (p *Proxy) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}
