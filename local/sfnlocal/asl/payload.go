package asl

import (
	"errors"
	"fmt"
	"strings"
)

// Template is a compiled Payload Template (Parameters): a JSON object in which a field
// whose name ends in ".$", at any depth of nested objects, takes its value from a Path
// or one of the context-object paths our state machines read ($$.Execution.Id,
// $$.Task.Token), and loses the ".$" suffix. Intrinsic functions (States.Format, ...),
// arrays and other context fields are refused: no definition of ours uses them.
type Template struct{ root tnode }

type tnodeKind int

const (
	tConstant tnodeKind = iota
	tObject
	tPath
)

// contextPaths are the context-object paths sfnlocal implements.
var contextPaths = set("$$.Execution.Id", "$$.Task.Token")

type tnode struct {
	kind   tnodeKind
	value  any
	keys   []string // object: output names, parallel to nodes
	field  []string // object: field names as written (for messages)
	nodes  []tnode
	path   *Path
	source string
}

// TemplateError names the field of a payload template that is invalid.
type TemplateError struct {
	Field string
	Msg   string
	// Unimplemented is set when the field is valid on the service but uses a feature
	// sfnlocal refuses (an intrinsic function, a wildcard path, ...).
	Unimplemented *UnimplementedError
}

func (e *TemplateError) Error() string { return e.Msg }

// CompileTemplate checks and compiles a payload template.
func CompileTemplate(v any) (*Template, error) {
	n, err := compileNode("", v)
	if err != nil {
		return nil, err
	}
	return &Template{root: n}, nil
}

// UsesTaskToken reports whether the template reads $$.Task.Token, which a
// .waitForTaskToken task must pass to the worker.
func (t *Template) UsesTaskToken() bool { return t.root.usesTaskToken() }

func (n *tnode) usesTaskToken() bool {
	switch n.kind {
	case tPath:
		return n.path.String() == "$$.Task.Token"
	case tObject:
		for i := range n.nodes {
			if n.nodes[i].usesTaskToken() {
				return true
			}
		}
	}
	return false
}

// compileNode compiles the value of field (the template itself for "").
func compileNode(field string, v any) (tnode, error) {
	switch x := v.(type) {
	case []any:
		ue := &UnimplementedError{Feature: "an array in a payload template"}
		return tnode{}, &TemplateError{Field: field, Msg: ue.Error(), Unimplemented: ue}
	case map[string]any:
		n := tnode{kind: tObject}
		dynamic := false
		for _, k := range sortedKeys(x) {
			var child tnode
			var err error
			name := k
			if strings.HasSuffix(k, ".$") {
				name = strings.TrimSuffix(k, ".$")
				child, err = compileDynamic(k, x[k])
			} else {
				child, err = compileNode(k, x[k])
			}
			if err != nil {
				return tnode{}, err
			}
			if child.kind != tConstant {
				dynamic = true
			}
			n.keys = append(n.keys, name)
			n.field = append(n.field, k)
			n.nodes = append(n.nodes, child)
		}
		if !dynamic {
			return tnode{kind: tConstant, value: x}, nil
		}
		return n, nil
	}
	return tnode{kind: tConstant, value: v}, nil
}

func compileDynamic(field string, v any) (tnode, error) {
	bad := func(detail string) (tnode, error) {
		msg := fmt.Sprintf("The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", field)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return tnode{}, &TemplateError{Field: field, Msg: msg}
	}
	s, ok := v.(string)
	if !ok {
		return bad("")
	}
	if name, ok := intrinsicName(s); ok {
		ue := &UnimplementedError{Feature: "intrinsic function " + name}
		return tnode{}, &TemplateError{Field: field, Msg: ue.Error(), Unimplemented: ue}
	}
	if !strings.HasPrefix(s, "$") {
		return bad("")
	}
	p, err := ParsePath(s)
	var ue *UnimplementedError
	if errors.As(err, &ue) {
		return tnode{}, &TemplateError{Field: field, Msg: ue.Error(), Unimplemented: ue}
	}
	if err != nil {
		return bad(err.Error())
	}
	if p.IsContext() && !contextPaths[s] {
		ue := &UnimplementedError{Feature: "the context object path " + s, Hint: "it implements $$.Execution.Id and $$.Task.Token"}
		return tnode{}, &TemplateError{Field: field, Msg: ue.Error(), Unimplemented: ue}
	}
	return tnode{kind: tPath, path: p, source: field}, nil
}

// Eval builds the payload from the input and the context object. A path that selects
// nothing is a States.Runtime error, as on the service.
func (t *Template) Eval(input, context any) (any, error) {
	return t.root.eval(input, context)
}

func (n *tnode) eval(input, context any) (any, error) {
	switch n.kind {
	case tConstant:
		return n.value, nil
	case tObject:
		out := make(map[string]any, len(n.nodes))
		for i := range n.nodes {
			v, err := n.nodes[i].eval(input, context)
			if err != nil {
				return nil, err
			}
			out[n.keys[i]] = v
		}
		return out, nil
	case tPath:
		root := input
		if n.path.IsContext() {
			root = context
		}
		v, err := n.path.Get(root)
		if err != nil {
			return nil, n.pathFailure(n.path.String(), root)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown template node")
}

func (n *tnode) pathFailure(expr string, root any) error {
	return Runtimef("The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", expr, n.source, Encode(root))
}

// intrinsicName recognizes an intrinsic function call, States.Name(...), and returns
// its name for the refusal.
func intrinsicName(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "States.") {
		return "", false
	}
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s), true
}
