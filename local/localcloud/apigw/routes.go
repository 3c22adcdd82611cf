package apigw

import (
	"fmt"
	"strings"
)

// resource is one node of the REST API's path tree (an
// AWS::ApiGateway::Resource, or the root).
type resource struct {
	id       string // what Ref of the resource returns: requestContext.resourceId
	part     string // "ui", "{id}" or "{proxy+}"; "" for the root
	path     string // "/ui/{proxy+}": the event's resource and resourcePath
	children []*resource
	methods  map[string]*method // by HttpMethod, "ANY" included
}

// match is a request path resolved to a resource and its path parameters.
type match struct {
	res    *resource
	params map[string]string // nil when the resource has none, as the event's pathParameters
}

// partKind orders the children at each level: API Gateway prefers a
// literal segment to a {param}, and a {param} to a greedy {name+}.
type partKind int

const (
	literalPart partKind = iota
	paramPart
	greedyPart
)

func kindOf(part string) partKind {
	switch {
	case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "+}"):
		return greedyPart
	case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}"):
		return paramPart
	}
	return literalPart
}

// paramName is "proxy" for "{proxy+}" and "id" for "{id}".
func paramName(part string) string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(part, "{"), "}"), "+")
}

// validPart rejects what API Gateway refuses to create: an empty part, a
// slash in it, or braces that are not a whole {name} or {name+}.
func validPart(part string) error {
	if part == "" || strings.Contains(part, "/") {
		return fmt.Errorf("path part %q is empty or has a slash", part)
	}
	if kindOf(part) == literalPart && strings.ContainsAny(part, "{}") {
		return fmt.Errorf("path part %q is neither a literal, {name} nor {name+}", part)
	}
	if kindOf(part) != literalPart && paramName(part) == "" {
		return fmt.Errorf("path part %q has no name", part)
	}
	return nil
}

// resolve finds the resource of a path (the part after the stage, "/" for
// the root), most specific first: at each level literal children, then
// {param} children, then a greedy {name+}, which takes the rest of the
// path (at least one segment). A branch that cannot match the rest is
// left for the next, so /a/c reaches /{x}/c when /a has no child c. A
// trailing slash is ignored, as API Gateway does.
func (root *resource) resolve(path string) (match, bool) {
	trimmed := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	if trimmed == "" {
		return match{res: root}, true
	}
	params := map[string]string{}
	res, ok := root.walk(strings.Split(trimmed, "/"), params)
	if !ok {
		return match{}, false
	}
	if len(params) == 0 {
		params = nil
	}
	return match{res: res, params: params}, true
}

func (n *resource) walk(segs []string, params map[string]string) (*resource, bool) {
	if len(segs) == 0 {
		return n, true
	}
	if segs[0] == "" { // "//" never matches a resource
		return nil, false
	}
	for _, kind := range []partKind{literalPart, paramPart, greedyPart} {
		for _, c := range n.children {
			if kindOf(c.part) != kind {
				continue
			}
			switch kind {
			case literalPart:
				if c.part != segs[0] {
					continue
				}
			case greedyPart:
				params[paramName(c.part)] = strings.Join(segs, "/")
				return c, true
			}
			if res, ok := c.walk(segs[1:], params); ok {
				if kind == paramPart {
					params[paramName(c.part)] = segs[0]
				}
				return res, true
			}
		}
	}
	return nil, false
}

// methodFor is the resource's method for an HTTP method: its own, else
// ANY. A resource without either is no route: API Gateway does not fall
// back to a less specific resource that would take the method.
func (n *resource) methodFor(httpMethod string) (*method, bool) {
	if m, ok := n.methods[httpMethod]; ok {
		return m, true
	}
	m, ok := n.methods["ANY"]
	return m, ok
}
