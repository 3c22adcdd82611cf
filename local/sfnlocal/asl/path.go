package asl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Path is a Reference Path of the States Language: "$" (the state's input) or "$$" (the
// context object) followed by names in dot notation:
//
//	$.a.b   $$.Execution.Id   $$.Task.Token
//
// That is all our state machines use. The rest of the JsonPath syntax that the service
// accepts (bracket notation and array indexes, wildcards, recursive descent, unions,
// slices, negative indexes, filters) is refused when a definition is created, with an
// *UnimplementedError naming it, so that a definition never meets a path that this
// endpoint would evaluate differently from the service.
type Path struct {
	src     string
	context bool
	segs    []segment
}

// segment is a name (".a").
type segment struct {
	name string
}

// UnimplementedError is a feature of the States Language that sfnlocal refuses rather
// than runs differently from the service.
// Hint, if set, says what sfnlocal implements instead.
type UnimplementedError struct{ Feature, Hint string }

func (e *UnimplementedError) Error() string {
	msg := e.Feature + " is not implemented by sfnlocal"
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// unimplementedPath names the path syntax that the service accepts and sfnlocal does not.
func unimplementedPath(feature string) error {
	return &UnimplementedError{Feature: "JSONPath " + feature, Hint: "it implements names in dot notation: $.a.b"}
}

// ParsePath parses a Reference Path.
func ParsePath(s string) (*Path, error) {
	p := &Path{src: s}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("a path must start with '$'")
	}
	rest := s[1:]
	if strings.HasPrefix(rest, "$") {
		p.context = true
		rest = rest[1:]
	}
	for i := 0; i < len(rest); {
		var seg segment
		var err error
		switch rest[i] {
		case '.':
			seg, i, err = parseDot(rest, i+1)
		case '[':
			seg, i, err = parseBracket(rest, i+1)
		default:
			return nil, fmt.Errorf("unexpected character %q at position %d", rest[i], i)
		}
		if err != nil {
			return nil, err
		}
		p.segs = append(p.segs, seg)
	}
	return p, nil
}

// MustParsePath parses a path known to be valid.
func MustParsePath(s string) *Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

func (p *Path) String() string { return p.src }

// IsContext reports whether the path starts with $$ (the context object).
func (p *Path) IsContext() bool { return p.context }

// PathError is a path that selects nothing where something is required. The messages
// are the service's (Jayway JsonPath's).
type PathError struct{ Msg string }

func (e *PathError) Error() string { return e.Msg }

// Get evaluates the path against its root (the input, or the context object for $$
// paths): the node, or a *PathError if it is missing.
func (p *Path) Get(root any) (any, error) {
	cur := root
	done := "$"
	for i, s := range p.segs {
		last := i == len(p.segs)-1
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, &PathError{fmt.Sprintf("Expected to find an object with property ['%s'] in path %s but found '%s'", s.name, done, typeName(cur))}
		}
		v, ok := obj[s.name]
		done += "['" + s.name + "']"
		if !ok {
			if last {
				return nil, &PathError{"No results for path: " + done}
			}
			return nil, &PathError{"Missing property in path " + done}
		}
		cur = v
	}
	return cur, nil
}

// Set returns root with the node at the path replaced by value, for ResultPath: missing
// objects along the path are created, nodes along the path are copied (root itself is
// not modified), and a path through a value that is not an object is a
// States.ResultPathMatchFailure.
func (p *Path) Set(root, value any) (any, error) {
	if p.context {
		return nil, fmt.Errorf("path %s cannot be written", p.src)
	}
	return setIn(root, p.segs, value, p.src)
}

func setIn(node any, segs []segment, value any, src string) (any, error) {
	if len(segs) == 0 {
		return value, nil
	}
	s := segs[0]
	fail := func() (any, error) {
		return nil, NewError(ErrorResultPathMatchFailure, fmt.Sprintf("Unable to apply ReferencePath %s to input %s", src, Encode(node)))
	}
	obj, ok := node.(map[string]any)
	if !ok {
		return fail()
	}
	child, exists := obj[s.name]
	if !exists {
		child = map[string]any{}
	}
	v, err := setIn(child, segs[1:], value, src)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(obj)+1)
	for k, ov := range obj {
		out[k] = ov
	}
	out[s.name] = v
	return out, nil
}

func isNameChar(c byte) bool {
	switch c {
	case '.', '[', ']', '(', ')', '\'', '"', ',', '*', '?', '@', ' ', '\t', '\n', '\r', '=', '!', '<', '>', '&', '|':
		return false
	}
	return c >= 0x20
}

func parseDot(s string, i int) (segment, int, error) {
	switch {
	case i >= len(s):
		return segment{}, i, fmt.Errorf("path must not end with '.'")
	case s[i] == '.':
		return segment{}, i, unimplementedPath("recursive descent ('..')")
	case s[i] == '*':
		return segment{}, i, unimplementedPath("wildcards ('.*', '[*]')")
	}
	j := i
	for j < len(s) && isNameChar(s[j]) {
		j++
	}
	if j == i {
		return segment{}, i, fmt.Errorf("expected a name after '.' at position %d", i)
	}
	return segment{name: s[i:j]}, j, nil
}

// parseBracket refuses bracket notation: our state machines use names in dot
// notation only. The JsonPath features that need brackets are named.
func parseBracket(s string, i int) (segment, int, error) {
	inner := s[i:]
	if j := strings.IndexByte(inner, ']'); j >= 0 {
		inner = inner[:j]
	}
	switch {
	case strings.HasPrefix(inner, "*"):
		return segment{}, i, unimplementedPath("wildcards ('.*', '[*]')")
	case strings.HasPrefix(inner, "?"):
		return segment{}, i, unimplementedPath("filters ('[?(...)]')")
	case strings.HasPrefix(inner, "-"):
		return segment{}, i, unimplementedPath("negative indexes ('[-1]')")
	case strings.Contains(inner, ":"):
		return segment{}, i, unimplementedPath("slices ('[1:3]')")
	case strings.Contains(inner, ","):
		return segment{}, i, unimplementedPath("unions ('[0,2]', \"['a','b']\")")
	}
	return segment{}, i, unimplementedPath("bracket notation and array indexes (\"$['a b']\", '$.a[0]')")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isUnimplemented reports whether err refuses a feature rather than an invalid text.
func isUnimplemented(err error) bool {
	var ue *UnimplementedError
	return errors.As(err, &ue)
}
