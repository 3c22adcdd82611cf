package yamldoc

import (
	"errors"
	"testing"
)

// The rules of the four readers of user YAML, as each calls Read.
var rules = map[string]func() Rule{
	"policy":        func() Rule { return Rule{Aliases: Follow(Budget), Trailing: AllowEmpty} },
	"fleet":         func() Rule { return Rule{Aliases: Follow(Budget), Trailing: Ignore} },
	"executor":      func() Rule { return Rule{Aliases: Refuse(), Trailing: RefuseAny} },
	"configuration": func() Rule { return Rule{Aliases: Keep(), Trailing: RefuseAny, KeepTags: true} },
}

// Documents of the table.
const (
	one           = "a: 1\n"
	two           = "a: 1\n---\nb: 2\n"
	trailingEmpty = "a: 1\n---\n# nothing\n"
	secondInvalid = "a: 1\n---\nb: [\n"
	empty         = "# a comment\n"
	syntax        = "a: [\n"
	sequence      = "[a, b]\n"
	tagged        = "a: !!int 1\n"
	alias         = "a: &x [1, 2]\nb: *x\n"
	anchorOnly    = "a: &x [1, 2]\n"
)

// what names an error of Read, so that rows compare categories.
func what(err error) string {
	var s *SyntaxError
	var d *SecondError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &s):
		return "syntax"
	case errors.As(err, &d):
		return "second"
	case errors.Is(err, ErrEmpty):
		return "empty"
	case errors.Is(err, ErrNotMapping):
		return "not a mapping"
	}
	return err.Error()
}

func TestRead(t *testing.T) {
	cases := []struct {
		rule, name, doc string
		read            string // what Read reports
		tags            int    // tag issues of Read
		walk            error  // what the caller's decoder meets walking the root by the rule
	}{
		{rule: "policy", name: "one document", doc: one, read: "ok"},
		{rule: "policy", name: "two documents", doc: two, read: "second"},
		{rule: "policy", name: "a trailing empty document", doc: trailingEmpty, read: "ok"},
		{rule: "policy", name: "a second document that is not YAML", doc: secondInvalid, read: "syntax"},
		{rule: "policy", name: "empty", doc: empty, read: "empty"},
		{rule: "policy", name: "not YAML", doc: syntax, read: "syntax"},
		{rule: "policy", name: "a sequence", doc: sequence, read: "not a mapping"},
		{rule: "policy", name: "a tag", doc: tagged, read: "ok", tags: 1},
		{rule: "policy", name: "an alias within the budget", doc: alias, read: "ok"},
		{rule: "policy", name: "an alias bomb", doc: bomb(), read: "ok", walk: ErrExpands},
		{rule: "policy", name: "an anchor without alias", doc: anchorOnly, read: "ok"},

		{rule: "fleet", name: "one document", doc: one, read: "ok"},
		{rule: "fleet", name: "two documents", doc: two, read: "ok"},
		{rule: "fleet", name: "a trailing empty document", doc: trailingEmpty, read: "ok"},
		{rule: "fleet", name: "a second document that is not YAML", doc: secondInvalid, read: "ok"}, // not read
		{rule: "fleet", name: "empty", doc: empty, read: "empty"},
		{rule: "fleet", name: "not YAML", doc: syntax, read: "syntax"},
		{rule: "fleet", name: "a sequence", doc: sequence, read: "not a mapping"},
		{rule: "fleet", name: "a tag", doc: tagged, read: "ok", tags: 1},
		{rule: "fleet", name: "an alias within the budget", doc: alias, read: "ok"},
		{rule: "fleet", name: "an alias bomb", doc: bomb(), read: "ok", walk: ErrExpands},
		{rule: "fleet", name: "an anchor without alias", doc: anchorOnly, read: "ok"},

		{rule: "executor", name: "one document", doc: one, read: "ok"},
		{rule: "executor", name: "two documents", doc: two, read: "second"},
		{rule: "executor", name: "a trailing empty document", doc: trailingEmpty, read: "second"},
		{rule: "executor", name: "a second document that is not YAML", doc: secondInvalid, read: "syntax"},
		{rule: "executor", name: "empty", doc: empty, read: "empty"},
		{rule: "executor", name: "not YAML", doc: syntax, read: "syntax"},
		{rule: "executor", name: "a sequence", doc: sequence, read: "not a mapping"},
		{rule: "executor", name: "a tag", doc: tagged, read: "ok", tags: 1},
		{rule: "executor", name: "an alias within the budget", doc: alias, read: "ok", walk: ErrRefused},
		{rule: "executor", name: "an alias bomb", doc: bomb(), read: "ok", walk: ErrRefused},
		{rule: "executor", name: "an anchor without alias", doc: anchorOnly, read: "ok"},

		{rule: "configuration", name: "one document", doc: one, read: "ok"},
		{rule: "configuration", name: "two documents", doc: two, read: "second"},
		{rule: "configuration", name: "a trailing empty document", doc: trailingEmpty, read: "second"},
		{rule: "configuration", name: "a second document that is not YAML", doc: secondInvalid, read: "syntax"},
		{rule: "configuration", name: "empty", doc: empty, read: "empty"},
		{rule: "configuration", name: "not YAML", doc: syntax, read: "syntax"},
		{rule: "configuration", name: "a sequence", doc: sequence, read: "not a mapping"},
		{rule: "configuration", name: "a tag", doc: tagged, read: "ok", tags: 0}, // the collector's
		{rule: "configuration", name: "an alias within the budget", doc: alias, read: "ok"},
		{rule: "configuration", name: "an alias bomb", doc: bomb(), read: "ok"}, // kept, not expanded
		{rule: "configuration", name: "an anchor without alias", doc: anchorOnly, read: "ok"},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			rule := rules[c.rule]()
			doc, err := Read([]byte(c.doc), rule)
			if got := what(err); got != c.read {
				t.Fatalf("Read: %s (%v), want %s", got, err, c.read)
			}
			if len(doc.Tags) != c.tags {
				t.Errorf("tags %v, want %d", doc.Tags, c.tags)
			}
			if err != nil {
				return
			}
			errs := walk(rule.Aliases, doc.Root)
			switch {
			case c.walk == nil && len(errs) != 0:
				t.Errorf("walk: %v, want none", errs)
			case c.walk != nil && (len(errs) == 0 || !errors.Is(errs[0], c.walk)):
				t.Errorf("walk: %v, want %v", errs, c.walk)
			}
		})
	}
}

// Read looks at the root without spending the budget: the decoder that
// reads the root next spends its one unit, so every node counts once.
func TestRead_SpendsNothing(t *testing.T) {
	r := Follow(4)
	doc, err := Read([]byte("[a, b, c]"), Rule{Aliases: r, Trailing: AllowEmpty})
	if !errors.Is(err, ErrNotMapping) {
		t.Fatalf("Read: %v, want ErrNotMapping", err)
	}
	if errs := walk(r, doc.Root); len(errs) != 0 {
		t.Errorf("4 nodes, budget 4, after Read: %v, want none", errs)
	}
}

// A document and what follows it: the line of a second document is the
// one its issue names, and a document read with a refused second one is
// still there, for a reader that reports its own problems first.
func TestRead_SecondDocument(t *testing.T) {
	doc, err := Read([]byte("a: 1\nb: 2\n---\nc: 3\n"), Rule{Aliases: Keep(), Trailing: RefuseAny})
	var second *SecondError
	if !errors.As(err, &second) || second.Line != 3 {
		t.Fatalf("Read: %v, want a second document at line 3", err)
	}
	if doc.Root == nil || len(doc.Root.Content) != 4 {
		t.Errorf("Root %v, want the first document's mapping", doc.Root)
	}
}

// The YAML reader's message is kept as it is: objects quote it.
func TestRead_SyntaxErrorIsTheReaders(t *testing.T) {
	_, err := Read([]byte(syntax), Rule{Aliases: Follow(Budget)})
	if err == nil || err.Error() != "yaml: line 1: did not find expected node content" {
		t.Errorf("Read: %v, want the reader's own message", err)
	}
}
