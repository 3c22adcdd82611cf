package policy

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

// decoder walks yaml.Nodes by hand instead of yaml.Unmarshal into structs,
// so that every problem (unknown key, wrong type, bad value) becomes an issue
// with a path, and none is silently dropped or turned into a zero value.
// Aliases are followed within the budget of yamldoc: a few kilobytes
// naming the same subtree many times cannot expand into millions of values
// and issues.
type decoder struct {
	issues    issue.List
	aliases   *yamldoc.Resolver
	exhausted bool
}

func newDecoder() *decoder { return &decoder{aliases: yamldoc.Follow(yamldoc.Budget)} }

// fields maps the keys of one mapping to what decodes their values.
type fields map[string]func(v *yaml.Node, path string)

// resolve follows aliases and spends one unit of the budget. It returns nil
// once the budget is spent, and callers then stop.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	r, err := d.aliases.Resolve(n)
	switch {
	case errors.Is(err, yamldoc.ErrUnresolved):
		d.issues.Errorf(CodeYAMLInvalid, path, "the alias here cannot be resolved")
	case errors.Is(err, yamldoc.ErrExpands):
		d.exhausted = true
		d.issues.Errorf(CodeYAMLInvalid, "", "the document expands to more than %d values (through aliases?); write it out plainly", yamldoc.Budget)
	}
	return r
}

// object decodes a mapping whose keys must be in fs. hint, when not empty, is
// added to the message of an unknown key.
func (d *decoder) object(n *yaml.Node, path, hint string, fs fields) bool {
	if n = d.resolve(n, path); n == nil {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.typeError(path, "a mapping of fields", n, "")
		return false
	}
	d.entries(n, path, func(key string, v *yaml.Node, p string) {
		f, ok := fs[key]
		if !ok {
			d.unknownField(key, p, fs, hint)
			return
		}
		f(v, p)
	})
	return true
}

// entries calls each for every key of the mapping n in document order. Keys
// must be scalars and unique; merge keys (<<) are refused because they would
// hide where a value came from.
func (d *decoder) entries(n *yaml.Node, path string, each func(key string, v *yaml.Node, p string)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content) && !d.exhausted; i += 2 {
		k, v := d.resolve(n.Content[i], path), n.Content[i+1]
		if k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			d.issues.Errorf(CodeTypeInvalid, path, "a key here is %s; keys must be plain strings", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.issues.Errorf(CodeYAMLInvalid, path, "merge keys (<<) are not supported in a RolloutPolicy; write the fields out")
			continue
		}
		p := issue.Child(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.issues.Errorf(CodeYAMLInvalid, p, "%s is set twice (lines %d and %d); keep one", quote(k.Value), line, k.Line)
			continue
		}
		seen[k.Value] = k.Line
		each(k.Value, v, p)
	}
}

// list calls each for every item of the sequence n.
func (d *decoder) list(n *yaml.Node, path, example string, each func(item *yaml.Node, p string)) {
	if n = d.resolve(n, path); n == nil {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, "a list", n, example)
		return
	}
	for i, item := range n.Content {
		if d.exhausted {
			return
		}
		each(item, fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) unknownField(key, path string, fs fields, hint string) {
	msg := fmt.Sprintf("unknown field %s", quote(key))
	if known := closest(key, fs); known != "" {
		msg += fmt.Sprintf("; did you mean %q?", known)
	}
	if hint != "" {
		msg += "; " + hint
	}
	d.issues.Errorf(CodeUnknownField, path, "%s", msg)
}

// closest returns the known key that key spells with another case or with
// '_' or '-' between words ("maxconcurrent", "max_concurrent").
func closest(key string, fs fields) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	for known := range fs {
		if norm(known) == norm(key) {
			return known
		}
	}
	return ""
}

// scalar returns n resolved when it is a scalar, else reports a type issue.
func (d *decoder) scalar(n *yaml.Node, path, want, example string) *yaml.Node {
	if n = d.resolve(n, path); n == nil {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		d.typeError(path, want, n, example)
		return nil
	}
	return n
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n = d.scalar(n, path, "a string", ""); n == nil {
		return "", false
	}
	if n.ShortTag() != "!!str" {
		d.typeError(path, "a string", n, fmt.Sprintf("quote it: %q", n.Value))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	if n = d.scalar(n, path, "an integer", ""); n == nil {
		return 0, false
	}
	var hint string
	if s := strings.TrimSpace(n.Value); strings.HasSuffix(s, "%") {
		hint = fmt.Sprintf("write %s without the percent sign", strings.TrimSpace(strings.TrimSuffix(s, "%")))
	}
	var v int
	if n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.typeError(path, "an integer", n, hint)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	if n = d.scalar(n, path, "true or false", ""); n == nil {
		return false, false
	}
	var v bool
	if n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.typeError(path, "true or false", n, "")
		return false, false
	}
	return v, true
}

// duration reads a Go duration string such as "30s" or "1h30m". A bare
// number is refused: 30 could mean seconds or minutes, and a policy must not
// leave that to guessing. A negative value is kept for Validate to report.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	const example = `write a number with a unit, e.g. "30s", "5m" or "1h30m"`
	if n = d.scalar(n, path, "a duration", example); n == nil {
		return 0, false
	}
	if tag := n.ShortTag(); tag == "!!int" || tag == "!!float" {
		d.issues.Errorf(CodeTypeInvalid, path, "expected a duration, got the number %s without a unit; %s", n.Value, example)
		return 0, false
	}
	if n.ShortTag() != "!!str" {
		d.typeError(path, "a duration", n, example)
		return 0, false
	}
	s := n.Value
	v, err := time.ParseDuration(s)
	if err != nil {
		msg := fmt.Sprintf("invalid duration %s; %s (units: ns, us, ms, s, m, h)", quote(s), example)
		if strings.HasSuffix(s, "d") {
			msg += `; days are not a unit: write "24h" for a day`
		}
		d.issues.Errorf(CodeDurationInvalid, path, "%s", msg)
		return 0, false
	}
	return v, true
}

func (d *decoder) typeError(path, want string, got *yaml.Node, hint string) {
	msg := fmt.Sprintf("expected %s, got %s", want, describe(got))
	if hint != "" {
		msg += "; " + hint
	}
	d.issues.Errorf(CodeTypeInvalid, path, "%s", msg)
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null (an empty value)"
		case "!!str":
			return "the string " + quote(n.Value)
		case "!!int":
			return "the integer " + clip(n.Value)
		case "!!float":
			return "the number " + clip(n.Value)
		case "!!bool":
			return "the boolean " + clip(n.Value)
		default:
			return fmt.Sprintf("a value tagged %s", clip(n.Tag))
		}
	}
	return "an unsupported YAML value"
}

// quote quotes user text for a message, cut to a readable length.
func quote(s string) string { return strconv.Quote(clip(s)) }

func clip(s string) string { return issue.Clip(s) }
