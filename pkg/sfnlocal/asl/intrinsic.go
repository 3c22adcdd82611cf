package asl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"strconv"
	"strings"
)

// Intrinsic is a parsed intrinsic function call such as
// States.Format('Hello {}', $.name). Arguments are literals (strings in single quotes
// with \ escapes, numbers, true, false, null), paths ($ or $$) or nested calls.
type Intrinsic struct {
	src  string
	name string
	args []intrinsicArg
}

type intrinsicArg struct {
	literal  any
	template []string // for string literals: the text split at unescaped {} (for States.Format)
	path     *Path
	call     *Intrinsic
}

// arity gives the minimum and maximum argument counts (-1: no maximum).
var intrinsicArity = map[string][2]int{
	"States.Format":         {1, -1},
	"States.StringToJson":   {1, 1},
	"States.JsonToString":   {1, 1},
	"States.Array":          {0, -1},
	"States.ArrayPartition": {2, 2},
	"States.ArrayContains":  {2, 2},
	"States.ArrayRange":     {3, 3},
	"States.ArrayGetItem":   {2, 2},
	"States.ArrayLength":    {1, 1},
	"States.ArrayUnique":    {1, 1},
	"States.Base64Encode":   {1, 1},
	"States.Base64Decode":   {1, 1},
	"States.Hash":           {2, 2},
	"States.JsonMerge":      {3, 3},
	"States.MathRandom":     {2, 3},
	"States.MathAdd":        {2, 2},
	"States.StringSplit":    {2, 2},
	"States.UUID":           {0, 0},
}

// IsIntrinsic reports whether a string looks like an intrinsic function call.
func IsIntrinsic(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "States.") }

// ParseIntrinsic parses an intrinsic function call and checks the function's name and
// argument count.
func ParseIntrinsic(s string) (*Intrinsic, error) {
	f, rest, err := parseCall(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("unexpected text after the function call: %q", rest)
	}
	return f, nil
}

func parseCall(s string) (*Intrinsic, string, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return nil, s, fmt.Errorf("expected '(' after the function name")
	}
	name := strings.TrimSpace(s[:open])
	arity, ok := intrinsicArity[name]
	if !ok {
		return nil, s, fmt.Errorf("unknown intrinsic function %q", name)
	}
	f := &Intrinsic{name: name}
	rest := strings.TrimLeft(s[open+1:], " ")
	if strings.HasPrefix(rest, ")") {
		rest = rest[1:]
	} else {
		for {
			arg, r, err := parseArg(rest)
			if err != nil {
				return nil, s, err
			}
			f.args = append(f.args, arg)
			r = strings.TrimLeft(r, " ")
			if strings.HasPrefix(r, ",") {
				rest = strings.TrimLeft(r[1:], " ")
				continue
			}
			if strings.HasPrefix(r, ")") {
				rest = r[1:]
				break
			}
			return nil, s, fmt.Errorf("expected ',' or ')' in the arguments of %s", name)
		}
	}
	if len(f.args) < arity[0] || (arity[1] >= 0 && len(f.args) > arity[1]) {
		return nil, s, fmt.Errorf("%s takes %s, not %d", name, arityText(arity), len(f.args))
	}
	f.src = s[:len(s)-len(rest)]
	return f, rest, nil
}

func arityText(a [2]int) string {
	switch {
	case a[1] < 0:
		return fmt.Sprintf("at least %d arguments", a[0])
	case a[0] == a[1]:
		return fmt.Sprintf("%d arguments", a[0])
	}
	return fmt.Sprintf("%d to %d arguments", a[0], a[1])
}

func parseArg(s string) (intrinsicArg, string, error) {
	switch {
	case s == "":
		return intrinsicArg{}, s, fmt.Errorf("missing argument")
	case s[0] == '\'':
		return parseStringLiteral(s)
	case strings.HasPrefix(s, "States."):
		call, rest, err := parseCall(s)
		return intrinsicArg{call: call}, rest, err
	case s[0] == '$':
		end := pathEnd(s)
		p, err := ParsePath(strings.TrimSpace(s[:end]))
		if err != nil {
			return intrinsicArg{}, s, fmt.Errorf("bad path argument %q: %v", s[:end], err)
		}
		return intrinsicArg{path: p}, s[end:], nil
	}
	end := strings.IndexAny(s, ",)")
	if end < 0 {
		end = len(s)
	}
	word := strings.TrimSpace(s[:end])
	v, err := Decode([]byte(word))
	if err != nil {
		return intrinsicArg{}, s, fmt.Errorf("bad argument %q", word)
	}
	switch v.(type) {
	case nil, bool, json.Number:
		return intrinsicArg{literal: v}, s[end:], nil
	}
	return intrinsicArg{}, s, fmt.Errorf("bad argument %q", word)
}

// pathEnd finds where a path argument ends: at a ',' or ')' outside brackets and quotes.
func pathEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			if _, k, err := readQuoted(s, i); err == nil {
				i = k - 1
			}
		case '[', '(':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// parseStringLiteral reads 'text' where \' \{ \} and \\ are escapes.
func parseStringLiteral(s string) (intrinsicArg, string, error) {
	var b strings.Builder
	var template []string
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) {
				return intrinsicArg{}, s, fmt.Errorf("unterminated escape in string literal")
			}
			i++
			b.WriteByte(s[i])
		case '{':
			if i+1 < len(s) && s[i+1] == '}' {
				template = append(template, b.String())
				b.Reset()
				i++
				continue
			}
			b.WriteByte(c)
		case '\'':
			template = append(template, b.String())
			return intrinsicArg{literal: strings.Join(template, "{}"), template: template}, s[i+1:], nil
		default:
			b.WriteByte(c)
		}
	}
	return intrinsicArg{}, s, fmt.Errorf("unterminated string literal")
}

func (f *Intrinsic) String() string { return f.src }

// Eval evaluates the call. Missing paths are *PathError; everything else that fails is a
// States.IntrinsicFailure *Error.
func (f *Intrinsic) Eval(input, context any) (any, error) {
	args := make([]any, len(f.args))
	for i, a := range f.args {
		switch {
		case a.call != nil:
			v, err := a.call.Eval(input, context)
			if err != nil {
				return nil, err
			}
			args[i] = v
		case a.path != nil:
			root := input
			if a.path.IsContext() {
				root = context
			}
			v, err := a.path.Get(root)
			if err != nil {
				return nil, err
			}
			args[i] = v
		default:
			args[i] = a.literal
		}
	}
	v, err := f.apply(args)
	if err != nil {
		return nil, NewError(ErrorIntrinsicFailure, fmt.Sprintf("Invalid arguments in %s: %v", f.name, err))
	}
	return v, nil
}

func (f *Intrinsic) apply(args []any) (any, error) {
	switch f.name {
	case "States.Format":
		return f.format(args)
	case "States.StringToJson":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		v, err := Decode([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("the string is not JSON: %v", err)
		}
		return v, nil
	case "States.JsonToString":
		return Encode(args[0]), nil
	case "States.Array":
		return append([]any{}, args...), nil
	case "States.ArrayPartition":
		return arrayPartition(args)
	case "States.ArrayContains":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		for _, e := range arr {
			if Equal(e, args[1]) {
				return true, nil
			}
		}
		return false, nil
	case "States.ArrayRange":
		return arrayRange(args)
	case "States.ArrayGetItem":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		i, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(arr)) {
			return nil, fmt.Errorf("index %d is out of bounds for an array of length %d", i, len(arr))
		}
		return arr[i], nil
	case "States.ArrayLength":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		return json.Number(strconv.Itoa(len(arr))), nil
	case "States.ArrayUnique":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		out := []any{}
	next:
		for _, e := range arr {
			for _, o := range out {
				if Equal(e, o) {
					continue next
				}
			}
			out = append(out, e)
		}
		return out, nil
	case "States.Base64Encode":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "States.Base64Decode":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("the string is not base64: %v", err)
		}
		return string(b), nil
	case "States.Hash":
		return hashOf(args)
	case "States.JsonMerge":
		return jsonMerge(args)
	case "States.MathRandom":
		return mathRandom(args)
	case "States.MathAdd":
		a, err := argRoundedInt(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := argRoundedInt(args, 1)
		if err != nil {
			return nil, err
		}
		return json.Number(strconv.FormatInt(a+b, 10)), nil
	case "States.StringSplit":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		sep, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(sep, r) }) {
			out = append(out, part)
		}
		return out, nil
	case "States.UUID":
		return newUUID(), nil
	}
	return nil, fmt.Errorf("unknown function")
}

func (f *Intrinsic) format(args []any) (any, error) {
	var parts []string
	if f.args[0].template != nil {
		parts = f.args[0].template
	} else {
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		parts = strings.Split(s, "{}")
	}
	values := args[1:]
	if len(parts)-1 != len(values) {
		return nil, fmt.Errorf("the template has %d placeholders but %d values were given", len(parts)-1, len(values))
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(values) {
			b.WriteString(javaString(values[i]))
		}
	}
	return b.String(), nil
}

func argString(args []any, i int) (string, error) {
	s, ok := args[i].(string)
	if !ok {
		return "", fmt.Errorf("argument %d must be a string, not %s", i+1, typeName(args[i]))
	}
	return s, nil
}

func argArray(args []any, i int) ([]any, error) {
	a, ok := args[i].([]any)
	if !ok {
		return nil, fmt.Errorf("argument %d must be an array, not %s", i+1, typeName(args[i]))
	}
	return a, nil
}

func argInt(args []any, i int) (int64, error) {
	n, ok := args[i].(json.Number)
	if !ok {
		return 0, fmt.Errorf("argument %d must be an integer, not %s", i+1, typeName(args[i]))
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("argument %d must be an integer, not %s", i+1, n)
	}
	return r.Num().Int64(), nil
}

// argRoundedInt rounds a number half up, as States.MathAdd does on the service
// (1.5 → 2, -1.5 → -1), and checks the 32-bit range.
func argRoundedInt(args []any, i int) (int64, error) {
	n, ok := args[i].(json.Number)
	if !ok {
		return 0, fmt.Errorf("argument %d must be a number, not %s", i+1, typeName(args[i]))
	}
	f, err := n.Float64()
	if err != nil {
		return 0, fmt.Errorf("argument %d is not a number: %s", i+1, n)
	}
	r := math.Floor(f + 0.5)
	if r < math.MinInt32 || r > math.MaxInt32 {
		return 0, fmt.Errorf("argument %d is out of the integer range: %s", i+1, n)
	}
	return int64(r), nil
}

func arrayPartition(args []any) (any, error) {
	arr, err := argArray(args, 0)
	if err != nil {
		return nil, err
	}
	size, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, fmt.Errorf("the chunk size must be positive, not %d", size)
	}
	out := []any{}
	for i := 0; i < len(arr); i += int(size) {
		out = append(out, append([]any{}, arr[i:min(len(arr), i+int(size))]...))
	}
	return out, nil
}

func arrayRange(args []any) (any, error) {
	start, err := argInt(args, 0)
	if err != nil {
		return nil, err
	}
	end, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	step, err := argInt(args, 2)
	if err != nil {
		return nil, err
	}
	if step == 0 {
		return nil, fmt.Errorf("the step must not be 0")
	}
	out := []any{}
	for v := start; (step > 0 && v <= end) || (step < 0 && v >= end); v += step {
		if len(out) == 1000 {
			return nil, fmt.Errorf("the range has more than 1000 elements")
		}
		out = append(out, json.Number(strconv.FormatInt(v, 10)))
	}
	return out, nil
}

func hashOf(args []any) (any, error) {
	data, ok := args[0].(string)
	if !ok {
		data = Encode(args[0])
	}
	alg, err := argString(args, 1)
	if err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("unknown hash algorithm %q (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)", alg)
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func jsonMerge(args []any) (any, error) {
	a, ok1 := args[0].(map[string]any)
	b, ok2 := args[1].(map[string]any)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("the first two arguments must be objects")
	}
	if deep, ok := args[2].(bool); !ok || deep {
		return nil, fmt.Errorf("only a shallow merge (false) is supported")
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out, nil
}

func mathRandom(args []any) (any, error) {
	start, err := argInt(args, 0)
	if err != nil {
		return nil, err
	}
	end, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	if end <= start {
		return nil, fmt.Errorf("the end must be greater than the start")
	}
	var r *mrand.Rand
	if len(args) == 3 {
		seed, err := argInt(args, 2)
		if err != nil {
			return nil, err
		}
		r = mrand.New(mrand.NewPCG(uint64(seed), 0))
	} else {
		r = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
	}
	return json.Number(strconv.FormatInt(start+r.Int64N(end-start), 10)), nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string { return newUUID() }
