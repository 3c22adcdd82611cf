package revision

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/yamldoc"
)

// maxDuplicateKeyIssues bounds the duplicate-key findings of one file: a
// generated configuration that repeats a key thousands of times needs one
// fix, not a response of thousands of issues.
const maxDuplicateKeyIssues = 10

// checkConfig reports a rendered configuration that a collector could not
// load, so that validation refuses it instead of the gateway pushing it to
// every agent of the fleet: YAML that does not parse (with the parser's
// line), a key given twice in one mapping (the collector's YAML decoder
// refuses that too), a top level that is not a mapping, and more than one
// document (a collector reads the first and ignores the rest). An empty file
// or one of comments only is not refused: it parses, and what a collector
// requires beyond YAML is the collector's to say. file is the path issues
// carry, configs/<fleet>.yaml.
func checkConfig(file string, body []byte) issue.List {
	var l issue.List
	doc, err := yamldoc.Read(body, yamldoc.Rule{Aliases: yamldoc.Keep(), Trailing: yamldoc.RefuseAny, KeepTags: true})
	if doc.Root != nil {
		l = checkTop(file, doc.Root)
	}
	var syntax *yamldoc.SyntaxError
	var second *yamldoc.SecondError
	switch {
	case errors.As(err, &syntax):
		// "yaml: line 3: mapping values are not allowed in this context",
		// in the first document or the second
		l.Errorf(CodeConfigInvalid, file, "%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	case errors.As(err, &second):
		l.Errorf(CodeConfigInvalid, file, "%s: line %d: a second YAML document: a collector reads only the first, so the configuration must be one document", file, second.Line)
	}
	return l
}

// checkTop reports the problems of the configuration's one document.
func checkTop(file string, top *yaml.Node) issue.List {
	var l issue.List
	// The configuration is the collector's, tags included; its top, the
	// mapping that wraps it, is Myriarch's: no tag, as in every object.
	for _, is := range issue.RefuseYAMLTag(top, "") {
		l.Errorf(is.Code, file, "%s: line %d: %s", file, top.Line, is.Message)
	}
	if top.Kind != yaml.MappingNode && !(top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null") {
		l.Errorf(CodeConfigInvalid, file, "%s: line %d: the configuration must be a YAML mapping (receivers:, exporters:, service: ...), not %s", file, top.Line, kindName(top))
		return l
	}
	dups := duplicateKeys(top, nil)
	for i, d := range dups {
		if i == maxDuplicateKeyIssues {
			l.Errorf(CodeConfigInvalid, file, "%s: %d more mapping keys are defined twice", file, len(dups)-i)
			break
		}
		l.Errorf(CodeConfigInvalid, file, "%s: line %d: mapping key %q already defined at line %d", file, d.again, d.key, d.first)
	}
	return l
}

type duplicateKey struct {
	key          string
	first, again int // lines
}

// duplicateKeys walks the tree once with a set per mapping; yaml.v3 finds
// the same keys when decoding into a map, by comparing every pair of keys,
// which on a large generated file is quadratic. Aliases are not followed:
// the anchored node is walked where it is defined.
func duplicateKeys(n *yaml.Node, out []duplicateKey) []duplicateKey {
	if n.Kind == yaml.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if first, dup := seen[k.Value]; dup {
				out = append(out, duplicateKey{key: k.Value, first: first, again: k.Line})
				continue
			}
			seen[k.Value] = k.Line
		}
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			out = duplicateKeys(c, out)
		}
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return fmt.Sprintf("a scalar (%s)", strings.TrimPrefix(n.ShortTag(), "!!"))
	case yaml.AliasNode:
		return "an alias"
	}
	return "a node of another kind"
}
