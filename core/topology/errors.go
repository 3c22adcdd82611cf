package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/myriarch/myriarch/core/policy"
)

// MissingAttributeError says that agents of a wave with by lack the region
// or zone attribute. The rollout cannot place them in a pass, and leaving
// them out would be a silent drop, so it is not created.
type MissingAttributeError struct {
	Wave       string
	By         policy.Split
	Attributes []string // the attributes each agent of the wave needs
	Count      int      // agents that lack one of them
	Of         int      // agents of the wave
	Sample     []string // the first agent IDs, ascending, at most sampleSize
}

// sampleSize is how many agent IDs the error names: enough to find the
// agents, few enough for one line.
const sampleSize = 5

func (e *MissingAttributeError) Error() string {
	more := ""
	if e.Count > len(e.Sample) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Sample))
	}
	return fmt.Sprintf("wave %q is split by %s, but %d of its %d agents lack %s: %s%s",
		e.Wave, e.By, e.Count, e.Of, strings.Join(e.Attributes, " or "), strings.Join(e.Sample, ", "), more)
}

// missingAttributes collects the agents without a region or zone.
type missingAttributes struct {
	count int
	ids   []string
}

func (m *missingAttributes) add(id string) {
	m.count++
	m.ids = append(m.ids, id)
}

func (m *missingAttributes) err(wave string, by policy.Split, attrs []string, of int) *MissingAttributeError {
	slices.Sort(m.ids)
	return &MissingAttributeError{Wave: wave, By: by, Attributes: attrs, Count: m.count, Of: of, Sample: slices.Clone(m.ids[:min(sampleSize, len(m.ids))])}
}

// joinErrors returns the only error, or all of them joined: errors.As finds
// each *MissingAttributeError.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
