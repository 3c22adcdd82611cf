package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"go.yaml.in/yaml/v3"
)

// maxValues bounds the values one document may expand to through aliases,
// as an editor's YAML reader does: past it there is no value to validate.
const maxValues = 100_000

// yamlValue reads the one YAML document in data as the JSON value an editor
// validates: mappings with their keys as written, sequences, and scalars by
// their YAML 1.2 type (a timestamp or binary stays the text written). An
// empty document is null. A syntax error, a second document, a key that is
// not a scalar or is set twice, and aliases expanding past maxValues are
// errors: the editor's YAML reader reports them, and there is no value.
func yamlValue(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, err
	case len(next.Content) > 0 && next.Content[0].ShortTag() != "!!null":
		return nil, errors.New("more than one document")
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	budget := maxValues
	return nodeValue(doc.Content[0], &budget)
}

func nodeValue(n *yaml.Node, budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("the document expands to more than %d values", maxValues)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nodeValue(n.Alias, budget)
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key that is not a scalar", k.Line)
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q is set twice", k.Line, k.Value)
			}
			v, err := nodeValue(n.Content[i+1], budget)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := nodeValue(item, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return n.Value, nil // no JSON number: as a string, it is no number either
		}
		return v, nil
	}
	return n.Value, nil
}
