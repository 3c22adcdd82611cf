package cfn

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/awslabs/goformation/v7/intrinsics"
)

// resolver is goformation's handler of Ref, Fn::GetAtt and Fn::Sub for
// one template; it keeps the errors, which the handlers cannot return.
type resolver struct {
	n    *names
	errs []error
}

func (r *resolver) fail(format string, args ...any) any {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
	return nil
}

func (r *resolver) ref(_ string, input, _ any) any {
	id, ok := input.(string)
	if !ok {
		return r.fail("Ref: %v is not a name", input)
	}
	v, ok := r.n.ref(id)
	if !ok {
		return r.fail("Ref %s: no resource or parameter of that name, or a parameter without a value", id)
	}
	return v
}

func (r *resolver) getAtt(_ string, input, _ any) any {
	var parts []string
	switch v := input.(type) {
	case []any:
		for _, p := range v {
			s, ok := p.(string)
			if !ok {
				return r.fail("Fn::GetAtt: %v is not a name", p)
			}
			parts = append(parts, s)
		}
	case string:
		parts = strings.SplitN(v, ".", 2)
	}
	if len(parts) != 2 {
		return r.fail("Fn::GetAtt: %v is not [logicalId, attribute]", input)
	}
	v, err := r.n.getAtt(parts[0], parts[1])
	if err != nil {
		return r.fail("%w", err)
	}
	return v
}

// split is goformation's Fn::Split with the list as []any: its own gives
// a []string, which its Fn::Select does not take as a list.
func (r *resolver) split(name string, input, template any) any {
	parts, ok := intrinsics.FnSplit(name, input, template).([]string)
	if !ok {
		return r.fail("Fn::Split: %v is not [delimiter, string]", input)
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// must makes a function that found nothing to return an error, where
// goformation would leave a null in the template.
func (r *resolver) must(h intrinsics.IntrinsicHandler) intrinsics.IntrinsicHandler {
	return func(name string, input, template any) any {
		v := h(name, input, template)
		if v == nil {
			return r.fail("%s: cannot resolve %v", name, input)
		}
		return v
	}
}

var subVariable = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// sub answers Fn::Sub in both forms, "${Name}" as Ref and "${Id.Attr}"
// as Fn::GetAtt, the named variables of the list form first; "${!x}" is
// the literal "${x}".
func (r *resolver) sub(_ string, input, _ any) any {
	var src string
	vars := map[string]any{}
	switch v := input.(type) {
	case string:
		src = v
	case []any:
		if len(v) != 2 {
			return r.fail("Fn::Sub: %v is not [string, variables]", input)
		}
		s, ok1 := v[0].(string)
		m, ok2 := v[1].(map[string]any)
		if !ok1 || !ok2 {
			return r.fail("Fn::Sub: %v is not [string, variables]", input)
		}
		src, vars = s, m
	default:
		return r.fail("Fn::Sub: %v is not a string", input)
	}
	out := subVariable.ReplaceAllStringFunc(src, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := vars[name]; ok {
			return fmt.Sprint(v)
		}
		if id, attr, ok := strings.Cut(name, "."); ok {
			v, err := r.n.getAtt(id, attr)
			if err != nil {
				r.errs = append(r.errs, fmt.Errorf("Fn::Sub %q: %w", src, err))
			}
			return v
		}
		v, ok := r.n.ref(name)
		if !ok {
			r.errs = append(r.errs, fmt.Errorf("Fn::Sub %q: nothing answers ${%s}", src, name))
		}
		return v
	})
	return strings.ReplaceAll(out, "${!", "${")
}
