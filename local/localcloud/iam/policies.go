package iam

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// Policies are the template's IAM policies: each role's identity policies
// and each Lambda function's resource policy.
type Policies struct {
	Partition, Region, Account string
	Roles                      map[string]*Role // by logical id (the access key id of its callers)

	// functionPolicies is each function's resource policy, by function
	// ARN, made of its AWS::Lambda::Permission statements.
	functionPolicies map[string]json.RawMessage
	// secrets maps a secret's name to its ARN, for SecretId given by name.
	secrets   map[string]string
	evaluator *Evaluator
}

// Role is one AWS::IAM::Role with every policy attached to it.
type Role struct {
	LogicalID, Name, Arn string
	Documents            []Document
	// AssumeRolePolicy is kept for information: the local cloud gives each
	// process its role's identity directly.
	AssumeRolePolicy json.RawMessage
}

// Document is one identity policy of a role and where it comes from:
// "inline", "managed:<arn>" or "policy:<logical id>".
type Document struct {
	Source string
	Policy json.RawMessage
}

// SessionArn is the ARN AWS names a caller with this role by, as it
// appears in AccessDenied messages.
func (r *Role) SessionArn(partition, account string) string {
	return fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/local", partition, account, r.Name)
}

// IdentityPolicies are the documents, as the evaluator takes them.
func (r *Role) IdentityPolicies() []json.RawMessage {
	out := make([]json.RawMessage, len(r.Documents))
	for i, d := range r.Documents {
		out[i] = d.Policy
	}
	return out
}

// FromTemplate reads the policies of a resolved template. The evaluator
// answers ServiceMayInvoke. An unknown managed policy, or a policy that
// names a role the template lacks, is an error.
func FromTemplate(t *cfn.Template, e *Evaluator) (*Policies, error) {
	p := &Policies{Partition: t.Partition, Region: t.Region, Account: t.Account, Roles: map[string]*Role{},
		functionPolicies: map[string]json.RawMessage{}, secrets: map[string]string{}, evaluator: e}
	byName := map[string]*Role{}
	var errs []error
	for _, id := range t.OfType("AWS::IAM::Role") {
		role, err := roleOf(t, id)
		errs = append(errs, err)
		p.Roles[id], byName[role.Name] = role, role
	}
	for _, typ := range []string{"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"} {
		for _, id := range t.OfType(typ) {
			errs = append(errs, attach(t.Resources[id].Properties, "policy:"+id, byName))
		}
	}
	var err error
	p.functionPolicies, err = functionPolicies(t)
	errs = append(errs, err)
	for _, id := range t.OfType("AWS::SecretsManager::Secret") {
		if name, ok := t.Resources[id].Properties["Name"].(string); ok {
			p.secrets[name] = t.Physical(id)
		}
	}
	return p, errors.Join(errs...)
}

// roleOf reads a role's own policies: inline and managed.
func roleOf(t *cfn.Template, id string) (*Role, error) {
	props := t.Resources[id].Properties
	role := &Role{LogicalID: id, Name: t.Physical(id), Arn: t.Arn(id)}
	role.AssumeRolePolicy, _ = json.Marshal(props["AssumeRolePolicyDocument"])
	inline, _ := props["Policies"].([]any)
	for _, v := range inline {
		m, _ := v.(map[string]any)
		doc, err := json.Marshal(m["PolicyDocument"])
		if err != nil || m["PolicyDocument"] == nil {
			return role, fmt.Errorf("iam: role %s: inline policy %v has no PolicyDocument", id, m["PolicyName"])
		}
		role.Documents = append(role.Documents, Document{Source: "inline", Policy: doc})
	}
	arns, _ := props["ManagedPolicyArns"].([]any)
	for _, v := range arns {
		arn, _ := v.(string)
		doc, err := managedPolicy(arn)
		if err != nil {
			return role, fmt.Errorf("iam: role %s: %w", id, err)
		}
		role.Documents = append(role.Documents, Document{Source: "managed:" + arn, Policy: doc})
	}
	return role, nil
}

// attach adds an AWS::IAM::Policy to the roles its Roles list names (by
// the roles' physical names, what Ref of a role gives).
func attach(props map[string]any, source string, byName map[string]*Role) error {
	doc, err := json.Marshal(props["PolicyDocument"])
	if err != nil || props["PolicyDocument"] == nil {
		return fmt.Errorf("iam: %s has no PolicyDocument", source)
	}
	names, _ := props["Roles"].([]any)
	var errs []error
	for _, v := range names {
		name, _ := v.(string)
		role, ok := byName[name]
		if !ok {
			errs = append(errs, fmt.Errorf("iam: %s names role %q, which the template does not define", source, name))
			continue
		}
		role.Documents = append(role.Documents, Document{Source: source, Policy: doc})
	}
	return errors.Join(errs...)
}

// RoleIDs lists the roles' logical ids, sorted.
func (p *Policies) RoleIDs() []string {
	ids := make([]string, 0, len(p.Roles))
	for id := range p.Roles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
