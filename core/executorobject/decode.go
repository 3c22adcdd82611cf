package executorobject

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/yamldoc"
)

// decoder reads yaml.Nodes by hand, so that every unknown key, wrong type
// and unreadable value is an issue with its path instead of a zero value.
// failed records the paths whose value could not be read: Validate's
// findings there would only repeat the problem.
type decoder struct {
	issues  issue.List
	failed  []string
	aliases *yamldoc.Resolver
}

// keys maps the keys of one mapping to what reads their values.
type keys map[string]func(v *yaml.Node, path string)

func (d *decoder) fail(code, path, format string, args ...any) {
	d.issues.Errorf(code, path, format, args...)
	d.failed = append(d.failed, path)
}

// document returns the root mapping of the only document in data, or nil.
// A second document is refused, even an empty one.
func (d *decoder) document(data []byte) *yaml.Node {
	doc, err := yamldoc.Read(data, yamldoc.Rule{Aliases: d.aliases, Trailing: yamldoc.RefuseAny})
	d.issues = append(d.issues, doc.Tags...)
	var syntax *yamldoc.SyntaxError
	var second *yamldoc.SecondError
	switch {
	case errors.As(err, &syntax):
		d.fail(CodeYAMLInvalid, "", "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	case errors.As(err, &second):
		d.fail(CodeYAMLInvalid, "", "not valid YAML: the file holds more than one YAML document (---); write one Executor per file")
	case errors.Is(err, yamldoc.ErrEmpty):
		d.fail(CodeYAMLInvalid, "", "the document is empty; an Executor needs apiVersion, kind, metadata and spec")
	case errors.Is(err, yamldoc.ErrRefused):
		d.resolve(doc.Root, "") // words the refusal of the alias
		fallthrough
	case err != nil:
		d.fail(CodeYAMLInvalid, "", "an Executor is a mapping with apiVersion, kind, metadata and spec")
	default:
		return doc.Root
	}
	return nil
}

// resolve returns n, or nil for an alias (*name), which an executor object
// does not need: refused (yamldoc.Refuse), a small document cannot expand
// into a large one, and every value is where it is read.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	r, err := d.aliases.Resolve(n)
	if err != nil {
		d.fail(CodeYAMLInvalid, path, "aliases (*%s) are not supported in an Executor; write the value out", n.Value)
	}
	return r
}

// mapping reads a mapping whose keys must be in ks, in document order.
// Keys are plain and unique; merge keys (<<) are refused, since they hide
// where a value came from. It reports whether n was a mapping.
func (d *decoder) mapping(n *yaml.Node, path string, ks keys) bool {
	return d.entries(n, path, func(key string, v *yaml.Node, p string) {
		read, ok := ks[key]
		if !ok {
			d.issues.Errorf(CodeUnknownField, p, "unknown field %s%s", strconv.Quote(key), suggestion(key, ks))
			return
		}
		read(v, p)
	})
}

// entries calls each for every key of the mapping n.
func (d *decoder) entries(n *yaml.Node, path string, each func(key string, v *yaml.Node, p string)) bool {
	if n = d.resolve(n, path); n == nil {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.typeError(path, "a mapping", n)
		return false
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i], path)
		switch {
		case k == nil:
			continue
		case k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge":
			d.fail(CodeYAMLInvalid, path, "a key on line %d is not a plain string (merge keys << are not supported): write the fields out", k.Line)
			continue
		}
		p := issue.Child(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.fail(CodeYAMLInvalid, p, "%s is set twice (lines %d and %d); keep one", strconv.Quote(k.Value), line, k.Line)
			continue
		}
		seen[k.Value] = k.Line
		each(k.Value, n.Content[i+1], p)
	}
	return true
}

// suggestion names the known key that key spells in another case or with
// '_' or '-' between words ("jobtemplateid", "secret_ref").
func suggestion(key string, ks keys) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	for known := range ks {
		if norm(known) == norm(key) {
			return fmt.Sprintf("; did you mean %q?", known)
		}
	}
	return ""
}

// scalar returns n resolved when it is a scalar of one of the tags.
func (d *decoder) scalar(n *yaml.Node, path, want string, tags ...string) *yaml.Node {
	if n = d.resolve(n, path); n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		for _, t := range tags {
			if n.ShortTag() == t {
				return n
			}
		}
	}
	d.typeError(path, want, n)
	return nil
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n = d.scalar(n, path, "a string", "!!str"); n == nil {
		return "", false
	}
	return n.Value, true
}

// nonEmpty reads a string that may not be written empty: in Object an empty
// string means "not set", and a written "" would silently be the default.
func (d *decoder) nonEmpty(n *yaml.Node, path string) (string, bool) {
	s, ok := d.str(n, path)
	if ok && s == "" {
		d.fail(CodeInvalid, path, "%s is empty; write a value or remove the key", path)
		return "", false
	}
	return s, ok
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	var v int
	if n = d.scalar(n, path, "an integer", "!!int"); n == nil || n.Decode(&v) != nil {
		if n != nil {
			d.fail(CodeTypeInvalid, path, "%s is not an integer this size", n.Value)
		}
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	var v bool
	if n = d.scalar(n, path, "true or false", "!!bool"); n == nil || n.Decode(&v) != nil {
		return false, false
	}
	return v, true
}

// duration reads a Go duration such as "10s" or "2m"; a bare number is
// refused (seconds or minutes?), and so is a written 0, which would read as
// "not set", the default.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	const example = `write a number with a unit, e.g. "10s" or "2m"`
	if n = d.scalar(n, path, "a duration", "!!str", "!!int", "!!float"); n == nil {
		return 0, false
	}
	if n.ShortTag() != "!!str" {
		d.fail(CodeTypeInvalid, path, "expected a duration, got the number %s without a unit; %s", n.Value, example)
		return 0, false
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		d.fail(CodeInvalid, path, "%s must be a positive duration, got %q; %s", path, n.Value, example)
		return 0, false
	}
	return v, true
}

// stringMap reads a mapping of names to string values.
func (d *decoder) stringMap(n *yaml.Node, path string) map[string]string {
	out := map[string]string{}
	d.entries(n, path, func(key string, v *yaml.Node, p string) {
		if s, ok := d.str(v, p); ok {
			out[key] = s
		}
	})
	return out
}

// intList reads a list of integers; an unreadable item stays as 0, so that
// Validate's indexes stay those of the document.
func (d *decoder) intList(n *yaml.Node, path string) []int {
	if n = d.resolve(n, path); n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, "a list of integers", n)
		return nil
	}
	out := make([]int, len(n.Content))
	for i, item := range n.Content {
		out[i], _ = d.integer(item, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}

// value reads any YAML value as JSON would carry it: strings, numbers,
// booleans, null, lists and mappings with string keys.
func (d *decoder) value(n *yaml.Node, path string) any {
	if n = d.resolve(n, path); n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := map[string]any{}
		d.entries(n, path, func(key string, v *yaml.Node, p string) { out[key] = d.value(v, p) })
		return out
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			out[i] = d.value(item, fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	}
	var v any
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!null":
		if err := n.Decode(&v); err != nil {
			d.fail(CodeTypeInvalid, path, "the value %q cannot be read: %v", n.Value, err)
		}
	default:
		d.typeError(path, "a string, number, boolean, list or mapping", n)
	}
	return v
}

func (d *decoder) typeError(path, want string, got *yaml.Node) {
	d.fail(CodeTypeInvalid, path, "expected %s, got %s", want, describe(got))
}

// describe names what a node is, for "expected X, got Y".
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind != yaml.ScalarNode:
		return "an unsupported YAML value"
	case n.ShortTag() == "!!null":
		return "null (an empty value)"
	case n.ShortTag() == "!!str":
		return "the string " + strconv.Quote(issue.Clip(n.Value))
	}
	return "the value " + issue.Clip(n.Value)
}

// within reports whether path is outer or inside it: spec.webhook.url is
// within spec.webhook, spec.webhookx is not.
func within(path, outer string) bool {
	rest, ok := strings.CutPrefix(path, outer)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[' || outer == "")
}
