package cfn

import "fmt"

// Props are resolved properties, read leniently: a missing or mistyped
// value reads as the zero value (or the default), and the reader decides
// whether that is an error.
type Props map[string]any

// Str is a string property.
func (p Props) Str(k string) string {
	s, _ := p[k].(string)
	return s
}

// Obj is an object property.
func (p Props) Obj(k string) Props {
	m, _ := p[k].(map[string]any)
	return m
}

// Num is a number, which templates may also write as a string ("60").
func (p Props) Num(k string, def float64) float64 {
	switch v := p[k].(type) {
	case float64:
		return v
	case string:
		var f float64
		if _, err := fmt.Sscan(v, &f); err == nil {
			return f
		}
	}
	return def
}
