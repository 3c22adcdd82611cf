package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/myriarch/myriarch/local/localcloud/apigw"
	"github.com/myriarch/myriarch/local/localcloud/cfn"
	"github.com/myriarch/myriarch/local/localcloud/iam"
	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// run starts the services in the order CloudFormation would need them:
// the IAM proxy in front of the backends, the functions, the state
// machine, the event sources and schedules, the API front, the gateway.
func (c *Cloud) run(ctx, runCtx context.Context, t *cfn.Template, localStreams map[string]string) error {
	o := c.o
	ev, err := iam.StartEvaluator(ctx)
	if err != nil {
		return err
	}
	c.onClose(ev.Close)
	policies, err := iam.FromTemplate(t, ev)
	if err != nil {
		return err
	}
	rec, err := iam.NewRecorder(filepath.Join(o.LogDir, "iam-calls.jsonl"))
	if err != nil {
		return err
	}
	c.Record = rec
	c.Policies = policies
	c.onClose(rec.Close)

	sec := newSecrets(Region, Account)
	for _, id := range t.OfType("AWS::SecretsManager::Secret") {
		p := cfn.Props(t.Resources[id].Properties)
		name, value := p.Str("Name"), p.Str("SecretString")
		if g := p.Obj("GenerateSecretString"); g != nil {
			value = generated(g)
		}
		sec.put(t.Arn(id), name, value)
	}
	for name, v := range o.Secrets {
		sec.put("", name, v)
	}
	c.Bus = &bus{buses: map[string]bool{"default": true}}
	for _, id := range t.OfType("AWS::Events::EventBus") {
		c.Bus.buses[t.Physical(id)], c.Bus.buses[t.Arn(id)] = true, true
	}

	sfnSrv, sfnAdmin, err := sfnEndpoint(c, o.Log)
	if err != nil {
		return err
	}
	ddbProxy, err := dynamoProxy(o.DynamoDB)
	if err != nil {
		return err
	}
	proxy := &iam.Proxy{Policies: policies, Evaluator: ev, Record: rec, Log: o.Log, SecretArn: sec.arnOf, TaskTokenStateMachine: sfnSrv.TaskTokenStateMachine}
	proxyURL, err := c.serve(proxy)
	if err != nil {
		return err
	}
	base := map[string]string{
		"AWS_REGION": Region, "AWS_DEFAULT_REGION": Region, "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_ENDPOINT_URL": proxyURL, "AWS_EC2_METADATA_DISABLED": "true", "TZ": ":UTC",
	}
	rt := &lambdas.Runtime{RIE: o.RIE, BaseEnv: base, Log: o.Log, LogDir: o.LogDir}
	c.onClose(rt.Close)
	proxy.Backends = map[string]http.Handler{
		"dynamodb": ddbProxy, "states": sfnSrv, "lambda": rt.Handler(),
		"events": c.Bus, "secretsmanager": sec,
	}
	fns, err := lambdas.FunctionsFrom(t)
	if err != nil {
		return err
	}
	for _, fn := range fns {
		if err := rt.Add(fn); err != nil {
			return err
		}
	}
	var allowed roleCheck = func(ctx context.Context, roleArn, action, resource string) (bool, error) {
		return roleAllowed(ctx, t, policies, ev, rec, roleArn, action, resource)
	}
	invoke := func(ctx context.Context, arn string, payload []byte) (json.RawMessage, error) {
		res, err := rt.Invoke(ctx, arn, payload)
		if err != nil {
			return nil, err
		}
		if res.FunctionError != "" {
			return nil, &messages.InvokeResponse_Error{Type: res.ErrorType, Message: res.ErrorMessage}
		}
		return res.Payload, nil
	}
	if err := createStateMachines(ctx, t, sfnSrv, sfnAdmin, invoke, allowed); err != nil {
		return err
	}
	if err := c.eventSources(runCtx, t, rt, localStreams, proxyURL); err != nil {
		return err
	}
	if err := c.schedules(runCtx, t, rt); err != nil {
		return err
	}

	front, err := apigw.New(t, apigwInvoker{rt}, ev.PolicyAllows, apigw.Options{ServiceMayInvoke: policies.ServiceMayInvoke})
	if err != nil {
		return err
	}
	apiURL, err := c.serve(front)
	if err != nil {
		return err
	}
	c.APIURL = apiURL + "/" + front.Stage()
	return c.startGateway(ctx, t, base, sec, allowed)
}

type apigwInvoker struct{ rt *lambdas.Runtime }

func (a apigwInvoker) Invoke(ctx context.Context, arn string, payload []byte) (apigw.Result, error) {
	r, err := a.rt.Invoke(ctx, arn, payload)
	return apigw.Result{Payload: r.Payload, FunctionError: r.FunctionError, ErrorMessage: r.ErrorMessage}, err
}

// roleCheck evaluates a call a service makes with a role, by its ARN.
type roleCheck func(ctx context.Context, roleArn, action, resource string) (bool, error)

// roleAllowed evaluates and records a call a service makes with a role
// (Step Functions invoking a task's function with the state machine's
// role), as the proxy does for the calls of processes.
func roleAllowed(ctx context.Context, t *cfn.Template, p *iam.Policies, ev *iam.Evaluator, rec *iam.Recorder, roleArn, action, resource string) (bool, error) {
	id, _ := t.LogicalIDOf(roleArn)
	role := p.Roles[id]
	if role == nil {
		return false, fmt.Errorf("role %s is not a role of the template", roleArn)
	}
	d, err := ev.Decide(ctx, iam.Request{Principal: role.SessionArn(p.Partition, p.Account), Action: action, Resource: resource,
		Account: p.Account, IdentityPolicies: role.IdentityPolicies()})
	call := iam.Call{Role: id, Action: action, Resource: resource, Allowed: err == nil && d.Allowed}
	if err != nil {
		call.Error = err.Error()
	}
	if rerr := rec.Record(call); rerr != nil && err == nil {
		err = rerr
	}
	return call.Allowed, err
}
