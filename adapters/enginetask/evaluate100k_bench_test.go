//go:build unix

package enginetask_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/local/storetest"
)

// BenchmarkEvaluate_100kTargets is the evaluation that begins the second
// wave of a configuration rollout of 10,000 and of 100,000 targets
// (largeRollout) as the engine Lambda runs it, on DynamoDB Local: load the
// rollout and every target, read the agents the engine asks for (the
// 1,000 next in the rest wave: nothing is in flight), decide, store the
// 1,000 targets it starts, then set their agents' desired hashes. Per evaluation it reports
// the CPU time of this process (getrusage RUSAGE_SELF, user + system: the
// store's client, decoding and the engine; DynamoDB Local is a process of
// its own), the wall time, the peak heap (evaluationFigures.peakHeap), the
// allocations, and the DynamoDB requests, items and capacity units that the
// store counted. Seeding the tables (every agent by its first report,
// the targets in batch writes) is not timed and takes minutes at 100,000.
// MYRIARCH_EVALUATE_TARGETS lists the sizes (default "10000,100000");
// run it with `make bench-evaluate`.
func BenchmarkEvaluate_100kTargets(b *testing.B) {
	storetest.Client(b)
	for _, n := range evaluateSizes(b) {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			for range b.N {
				benchmarkLargeEvaluation(b, n)
			}
		})
	}
}

func benchmarkLargeEvaluation(b *testing.B, n int) {
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	st := storetest.New(b)
	seeding := time.Now()
	l := newLargeRollout(b, n, largeStart)
	l.seed(b, ctx, st)
	b.Logf("seeded %d agents and targets in %v", n, time.Since(seeding).Round(time.Second))
	id, now := l.r.ID, l.now
	l = largeRollout{} // the Lambda holds none of it
	b.ReportAllocs()
	defer enginetask.SetGC()() // as the engine Lambda's main does
	cpu := cpuSeconds()
	b.StartTimer()
	f := measureEvaluation(b, ctx, st, id, now)
	b.StopTimer()
	cpu = cpuSeconds() - cpu
	wantStarted(b, ctx, st, id, largeStart)
	u := f.usage
	b.ReportMetric(cpu, "cpu-s")
	b.ReportMetric(f.wall.Seconds(), "wall-s")
	b.ReportMetric(float64(f.peakHeap)/(1<<20), "peak-heap-MB")
	if f.peakRSS > 0 {
		b.ReportMetric(float64(f.peakRSS)/(1<<20), "peak-rss-MB")
	}
	b.ReportMetric(float64(f.allocBytes)/(1<<20), "alloc-MB")
	b.ReportMetric(float64(f.allocs), "allocs")
	b.ReportMetric(float64(u.Requests), "requests")
	b.ReportMetric(float64(u.ItemsRead), "items-read")
	b.ReportMetric(float64(u.ItemsWritten), "items-written")
	b.ReportMetric(u.ReadUnits, "RCU")
	b.ReportMetric(u.WriteUnits, "WCU")
	b.StartTimer()
}

// largeStart is the targets the measured evaluation starts: the first wave
// and maxConcurrent of the large rollout.
const largeStart = 1000

func evaluateSizes(b *testing.B) []int {
	v := os.Getenv("MYRIARCH_EVALUATE_TARGETS")
	if v == "" {
		return []int{10000, 100000}
	}
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < largeStart || n%largeStart != 0 {
			b.Fatalf("MYRIARCH_EVALUATE_TARGETS=%q: want multiples of %d, comma-separated", v, largeStart)
		}
		out = append(out, n)
	}
	return out
}

// cpuSeconds is the CPU time of this process so far, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
