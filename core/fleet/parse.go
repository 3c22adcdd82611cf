package fleet

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/yamldoc"
)

// Issue codes of Parse and Validate (docs/version-selection.md,
// "Validation"): selection_invalid, executor_invalid, policy_not_found and
// unknown_field for the rules; the others name structural problems.
const (
	CodeYAMLInvalid      = "yaml_invalid"      // not YAML, or not a mapping at the top
	CodeYAMLTagInvalid   = issue.CodeYAMLTag   // an explicit tag (!!int 0.161.0), the rule of every object
	CodeFieldInvalid     = "field_invalid"     // wrong type or value, or a key listed twice
	CodeFieldRequired    = "field_required"    // apiVersion, kind or metadata.name missing
	CodeNameInvalid      = "name_invalid"      // metadata.name outside NamePattern
	CodeUnknownField     = "unknown_field"     // a key the object does not have
	CodeSelectionInvalid = "selection_invalid" // the rules of update.selection
	CodeExecutorInvalid  = "executor_invalid"  // update.executor and update.executorRef
	CodePolicyNotFound   = "policy_not_found"  // a policy reference without an object
	CodeVersionMissing   = "version_missing"   // warning: an executor but no collector.version
)

// Parse reads one Fleet document. Structural problems (YAML syntax, types,
// unknown or repeated keys, apiVersion and kind) are issues with the field
// path; the rules of the frame are Validate's. collector.version is stored
// normalized and a missing executor is none. Parse never panics: whatever it
// could read is in the returned Fleet.
func Parse(data []byte) (Fleet, issue.List) {
	p := parser{aliases: yamldoc.Follow(yamldoc.Budget)}
	root := p.document(data)
	if root == nil {
		return Fleet{}, p.issues
	}
	var f Fleet
	var apiVersion, kind string
	p.mapping(root, "", fields{
		"apiVersion": p.str(&apiVersion),
		"kind":       p.str(&kind),
		"metadata":   p.object(fields{"name": p.str(&f.Name)}),
		"spec":       p.object(p.specFields(&f)),
	})
	p.header(apiVersion, kind)
	f.Collector.Version = NormalizeVersion(f.Collector.Version)
	if f.Update.Executor == "" {
		f.Update.Executor = ExecutorNone
	}
	return f, p.issues
}

// document returns the root mapping of the first document in data; what
// follows it is not read.
func (p *parser) document(data []byte) *yaml.Node {
	doc, err := yamldoc.Read(data, yamldoc.Rule{Aliases: p.aliases, Trailing: yamldoc.Ignore})
	p.issues = append(p.issues, doc.Tags...)
	var syntax *yamldoc.SyntaxError
	switch {
	case errors.As(err, &syntax):
		p.issues.Errorf(CodeYAMLInvalid, "", "the document is not valid YAML: %v", err)
	case errors.Is(err, yamldoc.ErrEmpty):
		p.issues.Errorf(CodeYAMLInvalid, "", "the document is empty")
	case err != nil:
		p.issues.Errorf(CodeYAMLInvalid, "", "the document must be a mapping with apiVersion, kind, metadata and spec")
	default:
		return doc.Root
	}
	return nil
}

func (p *parser) specFields(f *Fleet) fields {
	sel := &f.Update.Selection
	return fields{
		"collector": p.object(fields{
			"distribution": p.str(&f.Collector.Distribution),
			"version":      p.str(&f.Collector.Version),
		}),
		"update": p.object(fields{
			"executor":    p.str((*string)(&f.Update.Executor)),
			"executorRef": p.str(&f.Update.ExecutorRef),
			"selection": p.object(fields{
				"enabled":        p.boolean(&sel.Enabled),
				"versionRange":   p.str(&sel.VersionRange),
				"versions":       p.list(&sel.Versions),
				"allowDowngrade": p.boolean(&sel.AllowDowngrade),
				"requireReason":  p.boolean(&sel.RequireReason),
				"rolloutPolicy":  p.str(&sel.RolloutPolicy),
			}),
		}),
		"rollout": p.object(fields{
			"configPolicy":  p.str(&f.Rollout.ConfigPolicy),
			"versionPolicy": p.str(&f.Rollout.VersionPolicy),
		}),
		"selector": p.object(fields{"matchAttributes": p.stringMap(&f.Selector.MatchAttributes)}),
		"config":   p.object(fields{"hash": p.str(&f.Config.Hash)}),
	}
}

func (p *parser) header(apiVersion, kind string) {
	switch {
	case apiVersion == "":
		p.issues.Errorf(CodeFieldRequired, "apiVersion", "apiVersion is required (%s)", APIVersion)
	case apiVersion != APIVersion:
		p.issues.Errorf(CodeFieldInvalid, "apiVersion", "apiVersion %q is not %s", apiVersion, APIVersion)
	}
	switch {
	case kind == "":
		p.issues.Errorf(CodeFieldRequired, "kind", "kind is required (%s)", ObjectKind)
	case kind != ObjectKind:
		p.issues.Errorf(CodeFieldInvalid, "kind", "kind %q is not %s", kind, ObjectKind)
	}
}

// parser collects issues while it walks the nodes. A field reads one value
// node at its path.
type (
	parser struct {
		issues  issue.List
		aliases *yamldoc.Resolver
	}
	field  func(n *yaml.Node, path string)
	fields map[string]field
)

// mapping reads the keys of n in document order: each known key by its
// field, an unknown one as unknown_field, a repeated one as field_invalid.
// A null node is an absent block.
func (p *parser) mapping(n *yaml.Node, path string, known fields) {
	n = p.deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.issues.Errorf(CodeFieldInvalid, path, "%s must be a mapping", path)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		at := join(path, key)
		switch f, ok := known[key]; {
		case seen[key]:
			p.issues.Errorf(CodeFieldInvalid, at, "%s is listed twice", at)
		case !ok:
			p.issues.Errorf(CodeUnknownField, at, "%s", unknownMessage(path, key, known))
		default:
			f(n.Content[i+1], at)
		}
		seen[key] = true
	}
}

func (p *parser) object(known fields) field {
	return func(n *yaml.Node, path string) { p.mapping(n, path, known) }
}

// str accepts any scalar as text, so that `version: 0.161` stays "0.161"
// instead of failing as a float.
func (p *parser) str(dst *string) field {
	return func(n *yaml.Node, path string) {
		n = p.deref(n)
		if isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode {
			p.issues.Errorf(CodeFieldInvalid, path, "%s must be a string", path)
			return
		}
		*dst = n.Value
	}
}

func (p *parser) boolean(dst *bool) field {
	return func(n *yaml.Node, path string) {
		n = p.deref(n)
		if isNull(n) {
			return
		}
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			p.issues.Errorf(CodeFieldInvalid, path, "%s must be true or false", path)
			return
		}
		*dst = b
	}
}

// list keeps one entry per element so that Validate's versions[<i>] indexes
// match the document; an element that is not a scalar becomes "".
func (p *parser) list(dst *[]string) field {
	return func(n *yaml.Node, path string) {
		n = p.deref(n)
		if isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			p.issues.Errorf(CodeFieldInvalid, path, "%s must be a list", path)
			return
		}
		out := make([]string, len(n.Content))
		for i, e := range n.Content {
			switch e = p.deref(e); {
			case isNull(e):
			case e.Kind == yaml.ScalarNode:
				out[i] = e.Value
			default:
				p.issues.Errorf(CodeFieldInvalid, fmt.Sprintf("%s[%d]", path, i), "%s[%d] must be a string", path, i)
			}
		}
		*dst = out
	}
}

func (p *parser) stringMap(dst *map[string]string) field {
	return func(n *yaml.Node, path string) {
		n = p.deref(n)
		if isNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode {
			p.issues.Errorf(CodeFieldInvalid, path, "%s must be a mapping", path)
			return
		}
		out := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := n.Content[i].Value, p.deref(n.Content[i+1])
			if v == nil {
				return // the alias budget is spent
			}
			at := join(path, key)
			if _, dup := out[key]; dup {
				p.issues.Errorf(CodeFieldInvalid, at, "%s is listed twice", at)
				continue
			}
			if v.Kind != yaml.ScalarNode {
				p.issues.Errorf(CodeFieldInvalid, at, "%s must be a string", at)
				continue
			}
			if isNull(v) {
				out[key] = ""
			} else {
				out[key] = v.Value
			}
		}
		*dst = out
	}
}

// unknownMessage suggests the known key that differs only in case, the
// usual typo (versionrange for versionRange).
func unknownMessage(path, key string, known fields) string {
	msg := fmt.Sprintf("unknown field %q", key)
	if path != "" {
		msg += " in " + path
	}
	for k := range known {
		if strings.EqualFold(k, key) {
			return msg + fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return msg
}

// deref follows an alias to its anchored node within the budget of
// yamldoc, as a policy does; nil once the budget is spent, which callers
// read as an absent value.
func (p *parser) deref(n *yaml.Node) *yaml.Node {
	r, err := p.aliases.Resolve(n)
	if errors.Is(err, yamldoc.ErrExpands) {
		p.issues.Errorf(CodeYAMLInvalid, "", "the document expands to more than %d values (through aliases?); write it out plainly", yamldoc.Budget)
	}
	return r
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
