package iam

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// functionPolicies builds each function's resource policy from its
// AWS::Lambda::Permission resources, one statement per permission, as
// Lambda's AddPermission writes them: the principal, the action, the
// function ARN, and conditions on aws:SourceArn and aws:SourceAccount.
func functionPolicies(t *cfn.Template) (map[string]json.RawMessage, error) {
	statements := map[string][]map[string]any{}
	for _, id := range t.OfType("AWS::Lambda::Permission") {
		props := t.Resources[id].Properties
		fn := functionArn(t.Partition, t.Region, t.Account, str(props["FunctionName"]))
		principal, action := str(props["Principal"]), str(props["Action"])
		if fn == "" || principal == "" || action == "" {
			return nil, fmt.Errorf("iam: permission %s lacks FunctionName, Principal or Action", id)
		}
		statements[fn] = append(statements[fn], permissionStatement(id, props, principal, action, fn))
	}
	out := map[string]json.RawMessage{}
	for fn, list := range statements {
		sort.Slice(list, func(i, j int) bool { return list[i]["Sid"].(string) < list[j]["Sid"].(string) })
		doc, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": list})
		if err != nil {
			return nil, err
		}
		out[fn] = doc
	}
	return out, nil
}

func permissionStatement(id string, props map[string]any, principal, action, fn string) map[string]any {
	st := map[string]any{"Sid": id, "Effect": "Allow", "Action": action, "Resource": fn}
	if strings.HasSuffix(principal, ".amazonaws.com") {
		st["Principal"] = map[string]any{"Service": principal}
	} else {
		st["Principal"] = map[string]any{"AWS": principal}
	}
	cond := map[string]any{}
	if v := str(props["SourceArn"]); v != "" {
		cond["ArnLike"] = map[string]any{"AWS:SourceArn": v}
	}
	if v := str(props["SourceAccount"]); v != "" {
		cond["StringEquals"] = map[string]any{"AWS:SourceAccount": v}
	}
	if len(cond) > 0 {
		st["Condition"] = cond
	}
	return st
}

// ServiceMayInvoke says whether the function's resource policy lets a
// service principal (apigateway.amazonaws.com, events.amazonaws.com)
// invoke it on behalf of sourceArn (the API's method, the rule), the
// check Lambda makes before a service invokes a function.
func (p *Policies) ServiceMayInvoke(principal, sourceArn, functionArn string) (bool, error) {
	policy, ok := p.functionPolicies[functionArn]
	if !ok {
		return false, nil
	}
	ctx := map[string]any{"aws:SourceArn": sourceArn, "aws:SourceAccount": p.Account}
	if acct := arnAccount(sourceArn); acct != "" {
		ctx["aws:SourceAccount"] = acct
	}
	d, err := p.evaluator.Decide(context.Background(), Request{
		Principal: principal, Action: "lambda:InvokeFunction", Resource: functionArn, Account: p.Account,
		ResourcePolicy: policy, Context: ctx,
	})
	return d.Allowed, err
}

// functionArn is a function's ARN from what FunctionName accepts: an ARN,
// a name, or name:qualifier.
func functionArn(partition, region, account, name string) string {
	if name == "" || strings.HasPrefix(name, "arn:") {
		return name
	}
	return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", partition, region, account, name)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
