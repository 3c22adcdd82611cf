// Package cfn reads a synthesized CloudFormation template the way the
// local cloud needs it: every intrinsic function resolved to the value
// CloudFormation would give it in a local account, so that the functions,
// the API front, the event source mappings and the state machine are built
// from the template alone. goformation's intrinsics processor does the
// walking and the functions that need no stack (Fn::Join, Fn::Select,
// Fn::Split, ...); Ref, Fn::GetAtt and Fn::Sub are answered here, because
// only the local cloud knows its names, and a reference nothing answers is
// an error rather than the empty string goformation would leave.
package cfn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/awslabs/goformation/v7/intrinsics"
)

// Template is a template with every intrinsic resolved.
type Template struct {
	Dir       string // the cloud assembly directory: assets are asset.<hash>/ and asset.<hash>.json
	StackName string
	Region    string
	Account   string
	Partition string
	Resources map[string]Resource // by logical id
	Outputs   map[string]any      // by output name: the resolved Value
	names     names
}

// Resource is one resource of the template, its properties resolved to
// plain JSON values (string, float64, bool, []any, map[string]any).
type Resource struct {
	Type       string
	Properties map[string]any
}

// Options are what a local account decides and the template cannot.
type Options struct {
	Region  string // default us-east-1
	Account string // default 123456789012
	// Parameters give the stack's parameters their values; a parameter
	// with neither a value here nor a Default is an error when referenced.
	Parameters map[string]string
	// Attributes answers Fn::GetAtt of attributes that only the running
	// cloud knows, by "<logicalID>.<attribute>": a table's StreamArn,
	// which DynamoDB gives when it creates the stream.
	Attributes map[string]string
}

// Load reads <dir>/<stackName>.template.json and resolves it.
func Load(dir, stackName string, opts Options) (*Template, error) {
	raw, err := os.ReadFile(filepath.Join(dir, stackName+".template.json"))
	if err != nil {
		return nil, fmt.Errorf("cfn: %w (run the synthesis first)", err)
	}
	return Parse(raw, dir, stackName, opts)
}

// Parse resolves a template's JSON.
func Parse(raw []byte, dir, stackName string, opts Options) (*Template, error) {
	var doc struct {
		Parameters map[string]struct{ Default any }
		Resources  map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("cfn: %s: %w", stackName, err)
	}
	t := &Template{Dir: dir, StackName: stackName, Region: or(opts.Region, "us-east-1"), Account: or(opts.Account, "123456789012"), Partition: "aws"}
	t.names = names{t: t, types: map[string]string{}, props: map[string]map[string]any{}, params: map[string]any{}, attrs: opts.Attributes}
	for id, r := range doc.Resources {
		t.names.types[id] = r.Type
		t.names.props[id] = r.Properties
	}
	for name, p := range doc.Parameters {
		if p.Default != nil {
			t.names.params[name] = p.Default
		}
	}
	for name, v := range opts.Parameters {
		t.names.params[name] = v
	}
	r := &resolver{n: &t.names}
	out, err := intrinsics.ProcessJSON(raw, &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
		"Ref": r.ref, "Fn::GetAtt": r.getAtt, "Fn::Sub": r.sub,
		"Fn::Split": r.split, "Fn::Select": r.must(intrinsics.FnSelect), "Fn::Join": r.must(intrinsics.FnJoin),
	}})
	if err != nil {
		return nil, fmt.Errorf("cfn: %s: %w", stackName, err)
	}
	if err := errors.Join(r.errs...); err != nil {
		return nil, fmt.Errorf("cfn: %s: %w", stackName, err)
	}
	var resolved struct {
		Resources map[string]Resource
		Outputs   map[string]struct{ Value any }
	}
	if err := json.Unmarshal(out, &resolved); err != nil {
		return nil, fmt.Errorf("cfn: %s: %w", stackName, err)
	}
	t.Resources = resolved.Resources
	t.Outputs = map[string]any{}
	for name, o := range resolved.Outputs {
		t.Outputs[name] = o.Value
	}
	return t, nil
}

// OfType lists the logical ids of the resources of a type, sorted.
func (t *Template) OfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Physical is what Ref of a resource returns.
func (t *Template) Physical(logicalID string) string {
	v, _ := t.names.ref(logicalID)
	return v
}

// Arn is what Fn::GetAtt <logicalID>.Arn returns.
func (t *Template) Arn(logicalID string) string {
	v, _ := t.names.getAtt(logicalID, "Arn")
	return v
}

// GetAtt is what Fn::GetAtt returns, or an error for an attribute the
// local cloud does not know.
func (t *Template) GetAtt(logicalID, attr string) (string, error) {
	return t.names.getAtt(logicalID, attr)
}

// LogicalIDOf finds the resource whose Ref or Arn is v.
func (t *Template) LogicalIDOf(v string) (string, bool) {
	for id := range t.names.types {
		if t.Physical(id) == v || t.Arn(id) == v {
			return id, true
		}
	}
	return "", false
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
