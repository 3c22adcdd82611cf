package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// rssBytes reads VmRSS from /proc/<pid>/status.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

// parseVmRSS finds "VmRSS:   12345 kB" in the text of /proc/<pid>/status.
func parseVmRSS(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS line %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// cpuTime reads utime+stime of /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU sums utime and stime, fields 14 and 15 of /proc/<pid>/stat.
// The command (field 2) is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted from the last ')'.
// Example: "42 (a b) S 1 ..." with utime 150 and stime 50 → 2 s.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of ds:
// the smallest value with at least p% of the values at or below it.
// Example: of 1..100 ms, p95 is 95 ms and p50 is 50 ms; of one value, it.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 · n)
	return s[max(rank, 1)-1]
}
