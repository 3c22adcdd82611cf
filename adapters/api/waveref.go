package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/rollout"
)

// waveRef is a wave as a request names it: by its index from 0 or by its
// name. In a body an index is a JSON number ({"wave": 1}) and a name a
// string ({"wave": "rest"}); in a query both are text (?wave=1,
// ?wave=rest). A string that is a whole number is always an index, so
// that a query and a body mean the same by it.
type waveRef struct {
	index int
	name  string // "" when given by index
}

// maxWaveNameChars bounds the name quoted back in a refusal.
const maxWaveNameChars = 64

// parseWaveText reads a wave of the query (or a JSON string of a body): a
// whole number is an index, which must not be negative; anything else is a
// name.
func parseWaveText(field, s string) (waveRef, *Problem) {
	if s == "" {
		return waveRef{}, badRequest("%s must be a wave's index (from 0) or its name, not empty", field)
	}
	n, err := strconv.Atoi(s)
	switch {
	case err == nil && n < 0:
		return waveRef{}, badRequest("%s must be a wave's index from 0 or its name, not %d", field, n)
	case err == nil:
		return waveRef{index: n}, nil
	case strings.Trim(s, "0123456789") == "":
		return waveRef{}, badRequest("%s %s is not a wave index", field, clip(s, maxWaveNameChars)) // digits beyond int
	}
	return waveRef{name: s}, nil
}

// parseWaveJSON reads the wave of a body: a whole number from 0 or a name.
func parseWaveJSON(field string, raw json.RawMessage) (waveRef, *Problem) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return waveRef{}, badRequest("%s is not a valid JSON string", field)
		}
		return parseWaveText(field, s)
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return waveRef{}, badRequest("%s must be a wave's index (a whole number from 0) or its name (a string), not %s", field, clip(string(raw), maxWaveNameChars))
	}
	i, err := strconv.Atoi(n.String())
	switch {
	case err != nil:
		return waveRef{}, badRequest("%s must be a wave's index (a whole number from 0) or its name (a string), not %s", field, n)
	case i < 0:
		return waveRef{}, badRequest("%s must be 0 or more, not %d", field, i)
	}
	return waveRef{index: i}, nil
}

// resolve is the index of the wave in the rollout. An index is taken as it
// is (whether the rollout has it is for the caller to judge); a name must
// be one of the rollout's waves, else the refusal is a 400
// wave_name_unknown that lists them.
func (w waveRef) resolve(ro rollout.Rollout) (int, *Problem) {
	if w.name == "" {
		return w.index, nil
	}
	names := make([]string, len(ro.Waves))
	known := make([]string, len(ro.Waves))
	for i, wave := range ro.Waves {
		if wave.Name == w.name {
			return i, nil
		}
		names[i] = wave.Name
		known[i] = fmt.Sprintf("%d %q", i, wave.Name)
	}
	p := problem(http.StatusBadRequest, CodeWaveNameUnknown, fmt.Sprintf("rollout %s has no wave named %q; its waves are %s",
		ro.ID, clip(w.name, maxWaveNameChars), strings.Join(known, ", ")))
	p.Waves = names
	return 0, p
}
