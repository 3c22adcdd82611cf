package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/issue"
)

// Trailing says what a file may hold after its one document. The objects
// differ here, and their docs say how, so it is the caller's to choose.
type Trailing int

const (
	// RefuseAny: a second document is refused, even an empty one (a last
	// "---"): executor objects, and configurations, since a collector
	// reads the first document and ignores the rest.
	RefuseAny Trailing = iota
	// AllowEmpty: a second document that holds nothing (a last "---", a
	// comment) is ignored; one with content is refused: policies.
	AllowEmpty
	// Ignore: nothing after the first document is read, not even to find
	// a syntax error there: fleets.
	Ignore
)

// Rule is how one object reads its file.
type Rule struct {
	// Aliases is the object's alias rule: Follow(Budget), Refuse() or
	// Keep(). Read only looks at the root through it, spending nothing;
	// the caller's decoder then resolves every node it reads, the root
	// first, with the same Resolver.
	Aliases  *Resolver
	Trailing Trailing
	// KeepTags leaves explicit tags to the caller: a configuration's tags
	// are the collector's. An object's are refused into Doc.Tags.
	KeepTags bool
}

// Doc is what Read could read. Node and Root are set whenever the first
// document parsed, even when an error says what follows it is refused, so
// that a caller may report the document's own problems first.
type Doc struct {
	Node *yaml.Node // the document node
	Root *yaml.Node // its content, through its aliases by the rule (as written with Keep)
	// Tags holds one issue (issue.CodeYAMLTag) per explicit tag, with the
	// tags cleared, when the document parsed and nothing refused follows.
	Tags issue.List
}

// Errors of Read, besides a *SyntaxError, a *SecondError and the alias
// rule's ErrRefused and ErrUnresolved (both only for a root that is an
// alias, which the YAML reader does not produce today).
var (
	// ErrEmpty: the document holds nothing but null: no bytes, a comment,
	// "---", "~".
	ErrEmpty = errors.New("the document is empty")
	// ErrNotMapping: the root is not a mapping; Doc.Root says what it is.
	ErrNotMapping = errors.New("the document is not a mapping")
)

// SyntaxError is a file that is not YAML, in its first document or in one
// that Trailing reads. Its Error is the YAML reader's own ("yaml: line 3:
// did not find expected node content"), which objects quote.
type SyntaxError struct{ Err error }

func (e *SyntaxError) Error() string { return e.Err.Error() }
func (e *SyntaxError) Unwrap() error { return e.Err }

// SecondError is a second document where Trailing refuses one.
type SecondError struct {
	Line int // where the second document starts
}

func (e *SecondError) Error() string {
	return fmt.Sprintf("line %d: a second YAML document", e.Line)
}

// Read reads the one document of data by the rule. Its error is the first
// of: a syntax error, a refused second document (or a syntax error in it),
// an alias at the root that the rule refuses or cannot resolve, ErrEmpty,
// ErrNotMapping; nil for a mapping. A panic of the YAML reader becomes a
// *SyntaxError: an object answers every input with issues.
func Read(data []byte, rule Rule) (Doc, error) {
	var doc Doc
	first, next, err := decode(data, rule.Trailing)
	switch {
	case err != nil && first == nil:
		return doc, err
	case first == nil:
		return doc, ErrEmpty
	}
	doc.Node = first
	if len(first.Content) > 0 {
		doc.Root = first.Content[0]
	}
	if err == nil {
		err = trailing(next, rule.Trailing)
	}
	if err != nil {
		return doc, err
	}
	if !rule.KeepTags {
		doc.Tags = issue.RefuseYAMLTags(first)
	}
	return doc, doc.look(rule.Aliases)
}

// decode parses the first document and, unless Trailing ignores it, the
// next one. first is nil when the file holds no document (no bytes, only
// comments) or the first document is not YAML; next is nil when nothing
// follows.
func decode(data []byte, t Trailing) (first, next *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			first, next, err = nil, nil, &SyntaxError{Err: fmt.Errorf("the YAML reader failed: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	first, err = node(dec)
	if err != nil || first == nil || t == Ignore {
		return first, nil, err
	}
	next, err = node(dec)
	return first, next, err
}

// node decodes the next document: nil, nil at the end of the file.
func node(dec *yaml.Decoder) (*yaml.Node, error) {
	var n yaml.Node
	switch err := dec.Decode(&n); {
	case errors.Is(err, io.EOF):
		return nil, nil
	case err != nil:
		return nil, &SyntaxError{Err: err}
	}
	return &n, nil
}

// trailing judges the document after the first one by the rule.
func trailing(next *yaml.Node, t Trailing) error {
	if next == nil || t == AllowEmpty && isNull(next) {
		return nil
	}
	return &SecondError{Line: next.Line}
}

// look judges the root: through its aliases by the rule, without spending
// any budget, since the caller's decoder resolves it again as it reads it.
func (d *Doc) look(r *Resolver) error {
	if isNull(d.Node) {
		return ErrEmpty
	}
	switch {
	case r.keep:
	case d.Root.Kind == yaml.AliasNode && r.refuse:
		return ErrRefused
	default:
		if d.Root = Target(d.Root); d.Root == nil || d.Root.Kind == yaml.AliasNode {
			return ErrUnresolved
		}
	}
	if d.Root.Kind != yaml.MappingNode {
		return ErrNotMapping
	}
	return nil
}

// isNull reports whether a document holds nothing but null: "", a
// comment, "---", "~".
func isNull(doc *yaml.Node) bool {
	if doc == nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return true
	}
	c := doc.Content[0]
	return c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null"
}
