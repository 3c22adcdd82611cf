package stack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/local/storetest"
)

// What a wave of 100 targets asks of DynamoDB, per target, from the
// rollout's creation until it completed: counts, not times, so that a
// change that reads more fails here on any machine. The bounds are the
// figures measured when they were set (docs/scale.md, "Reads per decided
// report") with room for what follows the clock: a slower run polls the
// lagging index more often while the wave's agents lag, and evaluates the
// whole rollout once more per health wait while targets apply.
func TestWave_ReadsPerTarget(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	const n = 100
	runs := runWave(t, n, 0, "wave-cost-", maxCountedWaves, func(w waveRun) bool { return len(overBudget(w, n)) == 0 })
	last := runs[len(runs)-1]
	for i, w := range runs {
		t.Logf("wave %d of %d, per target:\n%s", i+1, len(runs), w.usage.Table(n))
		if i < len(runs)-1 {
			t.Logf("wave %d over its budget, measured again: %s", i+1, strings.Join(overBudget(w, n), "; "))
		}
	}
	for _, e := range overBudget(last, n) {
		t.Error(e)
	}
	if last.usage["BatchGetItem targets"].ItemsRead == 0 || last.usage["GetRecords agent stream"].ItemsRead == 0 {
		t.Fatalf("the wave read no target by key or no stream record: %v", last.usage.Names())
	}
}

// maxCountedWaves bounds the waves TestWave_ReadsPerTarget measures: the
// counts of a wave of 100 follow the clock (a slower run reads more), and
// now and then one meets the stack busy with something else; the next wave
// of the same stack shows the wave's own cost. A change that reads more
// fails every one of them.
const maxCountedWaves = 3

// overBudget lists the counts of a wave of n targets over their bounds.
func overBudget(w waveRun, n int) []string {
	per := func(v int64) float64 { return float64(v) / float64(n) }
	kinds := func(prefix string) usage.Counts {
		var c usage.Counts
		for name, k := range w.usage {
			if strings.HasPrefix(name, prefix) {
				c = c.Add(k)
			}
		}
		return c
	}
	total := w.usage.Total()
	stream := kinds("GetRecords agent stream")
	agents := kinds("BatchGetItem agents")
	lagging := kinds("Scan agents/lagging")
	var over []string
	for _, c := range []struct {
		what       string
		got, limit float64
	}{
		// The budget of the whole: store and stream, bytes as DynamoDB
		// sizes items. It was 41 KB before targets were read by key and
		// agents and targets packed, 6.7 to 8.3 KB before health reports
		// were decided on their images and the stream carried new images
		// only; 4.7 KB after (3.0 KB the store's); 3.3 to 4.6 KB (2.0 to
		// 3.3 KB) once agent items left their credential and push to the
		// packed document, targets their keys, and one evaluation ended
		// the health waits that end within 2 s of each other; 2.7 KB (1.4
		// KB the store's) once the lagging index projected the desired
		// state alone, with one whole evaluation; 3.5 KB (2.1 KB) with the
		// health wait of 10 s, which is evaluated whole twice as a wave with
		// a production health wait is. A slower run reads the lagging index
		// more often.
		{what: "bytes read per target (store and stream)", got: per(total.BytesRead), limit: 4_000},
		{what: "bytes read by the store per target", got: per(total.BytesRead - stream.BytesRead), limit: 2_500},
		// Requests that did work: about 1.1 when the machine is busy, 1.75
		// when it is quiet, where the gateway writes each report as it
		// comes rather than several queued together.
		{what: "requests that read or wrote something, per target", got: per(total.Requests - total.EmptyReads), limit: 2},
		// Reads that found nothing are the idle polls of the two streams,
		// the lagging index and the rollout: they follow the seconds the
		// wave lasts, not its targets (about 10 a second measured).
		{what: "reads that found nothing, per second", got: float64(total.EmptyReads) / w.counted.Seconds(), limit: 30},
		// A targeted evaluation reads its own targets, not its wave (that
		// was 8 targets per target).
		{what: "targets read by key per target", got: per(kinds("BatchGetItem targets").ItemsRead), limit: 2},
		{what: "targets read by Query (whole evaluations) per target", got: per(kinds("Query targets").ItemsRead), limit: 5},
		{what: "agents read by key per target", got: per(agents.ItemsRead), limit: 5},
		{what: "lagging entries read per target", got: per(lagging.ItemsRead), limit: 6},
		{what: "agent stream records per target", got: per(stream.ItemsRead), limit: 4.5},
		// Packed, an agent item is about 390 bytes and a stream record of
		// its new image about 435 (520 and 565 while the credential, the
		// acknowledged push and the assigned revision were attributes of
		// their own, schema 2; 1.1 KB a record with the old image too; 2.8
		// KB readable).
		{what: "bytes per agent read by key", got: float64(agents.BytesRead) / float64(max(agents.ItemsRead, 1)), limit: 460},
		{what: "bytes per agent stream record", got: float64(stream.BytesRead) / float64(max(stream.ItemsRead, 1)), limit: 510},
		// The lagging index projects the desired state alone: about 100
		// bytes an entry (an agent's whole item, 420, while it projected
		// everything).
		{what: "bytes per lagging entry", got: float64(lagging.BytesRead) / float64(max(lagging.ItemsRead, 1)), limit: 150},
	} {
		if c.got > c.limit {
			over = append(over, fmt.Sprintf("%s: %.2f, want at most %.2f", c.what, c.got, c.limit))
		}
	}
	return over
}
