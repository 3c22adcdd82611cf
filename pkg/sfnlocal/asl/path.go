package asl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Path is a parsed Path of the States Language: "$" (the state's input) or "$$" (the
// context object) followed by JsonPath segments.
//
// Supported syntax (the subset that the specification and the service use):
//
//	.name  ['name']  ["name"]  [0]  [-1]      definite segments (a Reference Path uses only these)
//	.*  [*]  ..name  ..*  [0,2]  ['a','b']  [1:3]  [::2]  [?(@.x == 1 && @.y)]   indefinite
//
// A definite path selects one node and fails if it is missing; an indefinite path
// selects a list (possibly empty), as Jayway JsonPath on the service does. Filters
// compare a definite @-path with a literal (==, !=, <, <=, >, >=) or test that it
// exists, joined with && and ||. Script expressions and functions such as length() are
// not supported and are refused when a definition is created.
type Path struct {
	src     string
	context bool
	segs    []segment
}

type segKind int

const (
	segName segKind = iota
	segIndex
	segWildcard
	segDeepName
	segDeepWildcard
	segNames
	segIndexes
	segSlice
	segFilter
)

type segment struct {
	kind    segKind
	name    string
	index   int
	names   []string
	indexes []int
	slice   [3]*int
	filter  filterExpr
}

// ParsePath parses a Path.
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
	segs, err := parseSegments(rest, false)
	if err != nil {
		return nil, err
	}
	p.segs = segs
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

// IsReference reports whether the path is a Reference Path: it can only identify a
// single node.
func (p *Path) IsReference() bool {
	for _, s := range p.segs {
		if s.kind != segName && s.kind != segIndex {
			return false
		}
	}
	return true
}

// writable reports whether ResultPath may write through the path.
func (p *Path) writable() bool {
	if p.context || !p.IsReference() {
		return false
	}
	for _, s := range p.segs {
		if s.kind == segIndex && s.index < 0 {
			return false
		}
	}
	return true
}

// PathError is a path that selects nothing where something is required.
type PathError struct{ Msg string }

func (e *PathError) Error() string { return e.Msg }

// Get evaluates the path against its root (the input, or the context object for $$
// paths). A definite path returns the node or a *PathError; an indefinite path returns
// the matches as an array.
func (p *Path) Get(root any) (any, error) {
	if p.IsReference() {
		return p.getDefinite(root)
	}
	return p.getAll(root), nil
}

func (p *Path) getDefinite(root any) (any, error) {
	cur := root
	done := "$"
	for i, s := range p.segs {
		last := i == len(p.segs)-1
		switch s.kind {
		case segName:
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
		case segIndex:
			arr, ok := cur.([]any)
			if !ok {
				return nil, &PathError{fmt.Sprintf("Expected to find an array with index [%d] in path %s but found '%s'", s.index, done, typeName(cur))}
			}
			idx := s.index
			if idx < 0 {
				idx += len(arr)
			}
			done += "[" + strconv.Itoa(s.index) + "]"
			if idx < 0 || idx >= len(arr) {
				return nil, &PathError{"Index out of bounds when evaluating path " + done}
			}
			cur = arr[idx]
		}
	}
	return cur, nil
}

func (p *Path) getAll(root any) []any {
	nodes := []any{root}
	for _, s := range p.segs {
		var next []any
		for _, n := range nodes {
			next = s.apply(n, next)
		}
		nodes = next
	}
	if nodes == nil {
		nodes = []any{}
	}
	return nodes
}

// apply appends to out the nodes that the segment selects from n.
func (s *segment) apply(n any, out []any) []any {
	switch s.kind {
	case segName:
		if obj, ok := n.(map[string]any); ok {
			if v, ok := obj[s.name]; ok {
				out = append(out, v)
			}
		}
	case segIndex:
		if arr, ok := n.([]any); ok {
			idx := s.index
			if idx < 0 {
				idx += len(arr)
			}
			if idx >= 0 && idx < len(arr) {
				out = append(out, arr[idx])
			}
		}
	case segWildcard:
		out = append(out, children(n)...)
	case segNames:
		if obj, ok := n.(map[string]any); ok {
			for _, name := range s.names {
				if v, ok := obj[name]; ok {
					out = append(out, v)
				}
			}
		}
	case segIndexes:
		if arr, ok := n.([]any); ok {
			for _, idx := range s.indexes {
				if idx < 0 {
					idx += len(arr)
				}
				if idx >= 0 && idx < len(arr) {
					out = append(out, arr[idx])
				}
			}
		}
	case segSlice:
		if arr, ok := n.([]any); ok {
			start, end, step := sliceBounds(s.slice, len(arr))
			for i := start; i < end; i += step {
				out = append(out, arr[i])
			}
		}
	case segDeepName, segDeepWildcard:
		out = s.deepScan(n, out)
	case segFilter:
		switch x := n.(type) {
		case []any:
			for _, e := range x {
				if s.filter.eval(e) {
					out = append(out, e)
				}
			}
		case map[string]any:
			if s.filter.eval(x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// deepScan walks n in document order (object keys sorted) and appends every value named
// s.name (or every descendant for ..*).
func (s *segment) deepScan(n any, out []any) []any {
	switch x := n.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if s.kind == segDeepWildcard || k == s.name {
				out = append(out, x[k])
			}
			out = s.deepScan(x[k], out)
		}
	case []any:
		for _, e := range x {
			if s.kind == segDeepWildcard {
				out = append(out, e)
			}
			out = s.deepScan(e, out)
		}
	}
	return out
}

func children(n any) []any {
	switch x := n.(type) {
	case map[string]any:
		out := make([]any, 0, len(x))
		for _, k := range sortedKeys(x) {
			out = append(out, x[k])
		}
		return out
	case []any:
		return x
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sliceBounds resolves [start:end:step] against a length like Python and Jayway do.
func sliceBounds(b [3]*int, n int) (start, end, step int) {
	start, end, step = 0, n, 1
	if b[2] != nil {
		step = *b[2]
	}
	norm := func(v int) int {
		if v < 0 {
			v += n
		}
		return min(max(v, 0), n)
	}
	if b[0] != nil {
		start = norm(*b[0])
	}
	if b[1] != nil {
		end = norm(*b[1])
	}
	return start, end, step
}

// Set returns root with the node at the path replaced by value, for ResultPath: missing
// objects along the path are created, nodes along the path are copied (root itself is
// not modified), and a path through a value that is not an object (or an array index
// out of range) is a States.ResultPathMatchFailure.
func (p *Path) Set(root, value any) (any, error) {
	if !p.writable() {
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
	switch s.kind {
	case segName:
		obj, ok := node.(map[string]any)
		if !ok {
			return fail()
		}
		child, exists := obj[s.name]
		if !exists {
			child = map[string]any{}
		}
		if !exists && len(segs) > 1 && segs[1].kind == segIndex {
			return fail()
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
	case segIndex:
		arr, ok := node.([]any)
		if !ok || s.index >= len(arr) {
			return fail()
		}
		v, err := setIn(arr[s.index], segs[1:], value, src)
		if err != nil {
			return nil, err
		}
		out := append([]any(nil), arr...)
		out[s.index] = v
		return out, nil
	}
	return fail()
}

// parseSegments parses the segments after "$" (or "@" inside a filter, where only
// definite segments are allowed).
func parseSegments(s string, definiteOnly bool) ([]segment, error) {
	var segs []segment
	for i := 0; i < len(s); {
		var seg segment
		var err error
		switch s[i] {
		case '.':
			seg, i, err = parseDot(s, i+1)
		case '[':
			seg, i, err = parseBracket(s, i+1)
		default:
			return nil, fmt.Errorf("unexpected character %q at position %d", s[i], i)
		}
		if err != nil {
			return nil, err
		}
		if definiteOnly && seg.kind != segName && seg.kind != segIndex {
			return nil, fmt.Errorf("only names and indexes are allowed here")
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

func isNameChar(c byte) bool {
	switch c {
	case '.', '[', ']', '(', ')', '\'', '"', ',', '*', '?', '@', ' ', '\t', '\n', '\r', '=', '!', '<', '>', '&', '|':
		return false
	}
	return c >= 0x20
}

func parseDot(s string, i int) (segment, int, error) {
	if i >= len(s) {
		return segment{}, i, fmt.Errorf("path must not end with '.'")
	}
	if s[i] == '.' {
		i++
		if i < len(s) && s[i] == '*' {
			return segment{kind: segDeepWildcard}, i + 1, nil
		}
		name, j := readName(s, i)
		if name == "" {
			return segment{}, i, fmt.Errorf("expected a name after '..' at position %d", i)
		}
		return segment{kind: segDeepName, name: name}, j, nil
	}
	if s[i] == '*' {
		return segment{kind: segWildcard}, i + 1, nil
	}
	name, j := readName(s, i)
	if name == "" {
		return segment{}, i, fmt.Errorf("expected a name after '.' at position %d", i)
	}
	return segment{kind: segName, name: name}, j, nil
}

func readName(s string, i int) (string, int) {
	j := i
	for j < len(s) && isNameChar(s[j]) {
		j++
	}
	return s[i:j], j
}

func parseBracket(s string, i int) (segment, int, error) {
	i = skipSpaces(s, i)
	if i >= len(s) {
		return segment{}, i, fmt.Errorf("unclosed '['")
	}
	var seg segment
	var err error
	switch c := s[i]; {
	case c == '*':
		seg, i = segment{kind: segWildcard}, i+1
	case c == '\'' || c == '"':
		seg, i, err = parseQuotedNames(s, i)
	case c == '?':
		seg, i, err = parseFilterSegment(s, i+1)
	case c == '-' || c == ':' || (c >= '0' && c <= '9'):
		seg, i, err = parseIndexes(s, i)
	default:
		return segment{}, i, fmt.Errorf("unexpected character %q in brackets at position %d", c, i)
	}
	if err != nil {
		return segment{}, i, err
	}
	i = skipSpaces(s, i)
	if i >= len(s) || s[i] != ']' {
		return segment{}, i, fmt.Errorf("expected ']' at position %d", i)
	}
	return seg, i + 1, nil
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// readQuoted reads a quoted string starting at s[i] (the quote) with \ escapes.
func readQuoted(s string, i int) (string, int, error) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 >= len(s) {
				return "", j, fmt.Errorf("unterminated escape")
			}
			j++
			b.WriteByte(s[j])
		case q:
			return b.String(), j + 1, nil
		default:
			b.WriteByte(s[j])
		}
	}
	return "", len(s), fmt.Errorf("unterminated quoted name")
}

func parseQuotedNames(s string, i int) (segment, int, error) {
	var names []string
	for {
		i = skipSpaces(s, i)
		if i >= len(s) || (s[i] != '\'' && s[i] != '"') {
			return segment{}, i, fmt.Errorf("expected a quoted name at position %d", i)
		}
		name, j, err := readQuoted(s, i)
		if err != nil {
			return segment{}, j, err
		}
		names = append(names, name)
		i = skipSpaces(s, j)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		break
	}
	if len(names) == 1 {
		return segment{kind: segName, name: names[0]}, i, nil
	}
	return segment{kind: segNames, names: names}, i, nil
}

func readInt(s string, i int) (int, int, bool) {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j || k-j > 9 {
		return 0, i, false
	}
	n, err := strconv.Atoi(s[i:k])
	return n, k, err == nil
}

func parseIndexes(s string, i int) (segment, int, error) {
	if strings.Contains(s[i:min(len(s), i+strings.IndexByte(s[i:]+"]", ']'))], ":") {
		var b [3]*int
		for part := 0; part < 3; part++ {
			i = skipSpaces(s, i)
			if n, j, ok := readInt(s, i); ok {
				b[part], i = &n, j
			}
			i = skipSpaces(s, i)
			if part < 2 && i < len(s) && s[i] == ':' {
				i++
				continue
			}
			break
		}
		if b[2] != nil && *b[2] <= 0 {
			return segment{}, i, fmt.Errorf("slice step must be positive")
		}
		return segment{kind: segSlice, slice: b}, i, nil
	}
	var idx []int
	for {
		i = skipSpaces(s, i)
		n, j, ok := readInt(s, i)
		if !ok {
			return segment{}, i, fmt.Errorf("expected an index at position %d", i)
		}
		idx = append(idx, n)
		i = skipSpaces(s, j)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		break
	}
	if len(idx) == 1 {
		return segment{kind: segIndex, index: idx[0]}, i, nil
	}
	return segment{kind: segIndexes, indexes: idx}, i, nil
}

// filterExpr is a parsed filter: a disjunction of conjunctions of terms.
type filterExpr struct{ or [][]filterTerm }

type filterTerm struct {
	path    []segment // relative to @
	op      string    // "" tests existence
	literal any
}

func (f filterExpr) eval(n any) bool {
	for _, and := range f.or {
		ok := true
		for _, t := range and {
			if !t.eval(n) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (t filterTerm) eval(n any) bool {
	v, err := (&Path{segs: t.path}).getDefinite(n)
	if err != nil {
		return false
	}
	if t.op == "" {
		return true
	}
	switch t.op {
	case "==":
		return Equal(v, t.literal)
	case "!=":
		return !Equal(v, t.literal)
	}
	c, ok := compareOrdered(v, t.literal)
	if !ok {
		return false
	}
	switch t.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

func compareOrdered(a, b any) (int, bool) {
	switch x := a.(type) {
	case json.Number:
		if y, ok := b.(json.Number); ok {
			return compareNumbers(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	}
	return 0, false
}

func parseFilterSegment(s string, i int) (segment, int, error) {
	if i >= len(s) || s[i] != '(' {
		return segment{}, i, fmt.Errorf("expected '(' after '?'")
	}
	// Find the matching ')', skipping quoted strings.
	depth, j := 0, i
	for ; j < len(s); j++ {
		c := s[j]
		if c == '\'' || c == '"' {
			_, k, err := readQuoted(s, j)
			if err != nil {
				return segment{}, j, err
			}
			j = k - 1
			continue
		}
		if c == '(' {
			depth++
		} else if c == ')' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if j >= len(s) {
		return segment{}, j, fmt.Errorf("unclosed filter expression")
	}
	expr, err := parseFilter(strings.TrimSpace(s[i+1 : j]))
	if err != nil {
		return segment{}, j, err
	}
	return segment{kind: segFilter, filter: expr}, j + 1, nil
}

func parseFilter(s string) (filterExpr, error) {
	var f filterExpr
	for _, disj := range splitOutsideQuotes(s, "||") {
		var and []filterTerm
		for _, term := range splitOutsideQuotes(disj, "&&") {
			t, err := parseFilterTerm(strings.TrimSpace(term))
			if err != nil {
				return f, err
			}
			and = append(and, t)
		}
		f.or = append(f.or, and)
	}
	return f, nil
}

func splitOutsideQuotes(s, sep string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '"' {
			if _, k, err := readQuoted(s, i); err == nil {
				i = k - 1
			}
			continue
		}
		if strings.HasPrefix(s[i:], sep) {
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}

func parseFilterTerm(s string) (filterTerm, error) {
	var t filterTerm
	if !strings.HasPrefix(s, "@") {
		return t, fmt.Errorf("a filter term must start with '@': %q", s)
	}
	j := 1
	for j < len(s) && !strings.ContainsRune("=!<> ", rune(s[j])) {
		if s[j] == '[' {
			k := strings.IndexByte(s[j:], ']')
			if k < 0 {
				return t, fmt.Errorf("unclosed '[' in filter")
			}
			j += k
		}
		j++
	}
	segs, err := parseSegments(s[1:j], true)
	if err != nil {
		return t, err
	}
	t.path = segs
	rest := strings.TrimSpace(s[j:])
	if rest == "" {
		return t, nil
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(rest, op) {
			t.op = op
			lit := strings.TrimSpace(rest[len(op):])
			if v, err := parseFilterLiteral(lit); err == nil {
				t.literal = v
				return t, nil
			}
			return t, fmt.Errorf("unsupported filter operand %q", lit)
		}
	}
	return t, fmt.Errorf("unsupported filter expression %q", s)
}

func parseFilterLiteral(s string) (any, error) {
	if s == "" {
		return nil, fmt.Errorf("missing operand")
	}
	if s[0] == '\'' || s[0] == '"' {
		v, j, err := readQuoted(s, 0)
		if err != nil || j != len(s) {
			return nil, fmt.Errorf("bad string literal")
		}
		return v, nil
	}
	v, err := Decode([]byte(s))
	if err != nil {
		return nil, err
	}
	switch v.(type) {
	case nil, bool, json.Number:
		return v, nil
	}
	return nil, fmt.Errorf("unsupported literal")
}
