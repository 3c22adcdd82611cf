package asl

import (
	"errors"
	"fmt"
	"strings"
)

// Template is a compiled Payload Template (Parameters, ResultSelector, ItemSelector):
// a JSON value in which a field whose name ends in ".$", at any depth (also inside
// arrays), takes its value from a Path, a context-object path ($$) or an intrinsic
// function, and loses the ".$" suffix.
type Template struct{ root tnode }

type tnodeKind int

const (
	tConstant tnodeKind = iota
	tObject
	tArray
	tPath
	tCall
)

type tnode struct {
	kind   tnodeKind
	value  any
	keys   []string // object: output names, parallel to nodes
	field  []string // object: field names as written (for messages)
	nodes  []tnode
	path   *Path
	call   *Intrinsic
	source string
}

// TemplateError names the field of a payload template that is invalid.
type TemplateError struct {
	Field string
	Msg   string
}

func (e *TemplateError) Error() string { return e.Msg }

// CompileTemplate checks and compiles a payload template.
func CompileTemplate(v any) (*Template, error) {
	n, err := compileNode(v)
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
		return n.path.IsContext() && strings.HasPrefix(n.path.String(), "$$.Task.Token")
	case tCall:
		return strings.Contains(n.call.String(), "$$.Task.Token")
	case tObject, tArray:
		for i := range n.nodes {
			if n.nodes[i].usesTaskToken() {
				return true
			}
		}
	}
	return false
}

func compileNode(v any) (tnode, error) {
	switch x := v.(type) {
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
				child, err = compileNode(x[k])
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
	case []any:
		n := tnode{kind: tArray}
		dynamic := false
		for _, e := range x {
			child, err := compileNode(e)
			if err != nil {
				return tnode{}, err
			}
			if child.kind != tConstant {
				dynamic = true
			}
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
	switch {
	case strings.HasPrefix(s, "$"):
		p, err := ParsePath(s)
		if err != nil {
			return bad(err.Error())
		}
		return tnode{kind: tPath, path: p, source: field}, nil
	case IsIntrinsic(s):
		f, err := ParseIntrinsic(s)
		if err != nil {
			return bad(err.Error())
		}
		return tnode{kind: tCall, call: f, source: field}, nil
	}
	return bad("")
}

// Eval builds the payload from the input and the context object. A path that selects
// nothing is a States.Runtime error, as on the service; a failing intrinsic function is
// a States.IntrinsicFailure.
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
	case tArray:
		out := make([]any, len(n.nodes))
		for i := range n.nodes {
			v, err := n.nodes[i].eval(input, context)
			if err != nil {
				return nil, err
			}
			out[i] = v
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
	case tCall:
		v, err := n.call.Eval(input, context)
		var pe *PathError
		if errors.As(err, &pe) {
			return nil, n.pathFailure(n.call.String(), input)
		}
		return v, err
	}
	return nil, fmt.Errorf("unknown template node")
}

func (n *tnode) pathFailure(expr string, root any) error {
	return Runtimef("The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", expr, n.source, Encode(root))
}
