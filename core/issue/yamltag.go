package issue

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// CodeYAMLTag is the issue of an explicit YAML tag (!!int, !!binary,
// !!python/object:..., !custom) in a fleet, policy or executor object, or
// on the top of a rendered configuration.
const CodeYAMLTag = "yaml_tag_invalid"

// RefuseYAMLTags applies RefuseYAMLTag to every node of a parsed document,
// keys included, with the field path of each (spec.waves[0].name). Aliases
// are not followed: an anchored node is checked where it is written.
//
// The schemas of Myriarch's objects name no YAML tag, so every explicit tag
// is refused, !!str included: one rule for every object, where a tag was
// ignored by one reader and refused by another. Quoting makes a value a
// string without a tag.
func RefuseYAMLTags(doc *yaml.Node) List {
	var l List
	walkTags(doc, "", &l)
	return l
}

func walkTags(n *yaml.Node, path string, l *List) {
	if n == nil || n.Kind == yaml.AliasNode {
		return
	}
	*l = append(*l, RefuseYAMLTag(n, path)...)
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkTags(c, path, l)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkTags(c, fmt.Sprintf("%s[%d]", path, i), l)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := Child(path, n.Content[i].Value)
			walkTags(n.Content[i], p, l)
			walkTags(n.Content[i+1], p, l)
		}
	}
}

// RefuseYAMLTag reports an explicit tag on n as an error at path and
// removes it, so that the reader that follows takes the value as it is
// written (`!!int 0.161.0` as the text 0.161.0, a tagged mapping as a
// mapping): the tag is the one finding, and the rest of the document is
// still checked. The non-specific tag `!` leaves no trace in the parsed
// node (go.yaml.in/yaml/v3 reads `! 12` as 12) and cannot be reported.
func RefuseYAMLTag(n *yaml.Node, path string) List {
	if n.Style&yaml.TaggedStyle == 0 {
		return nil
	}
	var l List
	l.Errorf(CodeYAMLTag, path, "the YAML tag %s is not supported: write the value without a tag (quote it to make it a string)", Clip(n.Tag))
	n.Tag, n.Style = "", n.Style&^yaml.TaggedStyle
	return l
}
