package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/rollout"
)

// tableWriter aligns columns separated by tabs and writes the lines
// without trailing blanks on Flush.
type tableWriter struct {
	buf bytes.Buffer
	tw  *tabwriter.Writer
	out io.Writer
}

func table(w io.Writer) *tableWriter {
	t := &tableWriter{out: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

func (t *tableWriter) Write(p []byte) (int, error) { return t.tw.Write(p) }

func (t *tableWriter) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	t.buf.Reset()
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") {
			l = strings.TrimRight(l[:len(l)-1], " ") + "\n"
		}
		if _, err := io.WriteString(t.out, l); err != nil {
			return err
		}
	}
	return nil
}

// row writes one line of a table: the cells separated by tabs.
func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

var (
	configHash = regexp.MustCompile(`^[0-9a-f]{64}$`)
	gitCommit  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// shortRef shortens what people do not read in full: a configuration hash
// to 12 digits, a Git commit to 8, as Git shows it. Versions stay.
func shortRef(s string) string {
	switch {
	case configHash.MatchString(s):
		return s[:12]
	case gitCommit.MatchString(s):
		return s[:8]
	}
	return s
}

// stamp is a time as RFC 3339 in UTC; "-" for none.
func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// shortDuration writes a duration as a person does: 5m, 4m12s, 1h30m, 12s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// statusOrder is the order in which the rollout page lists targets
// (docs/rollouts.md, "Live progress of a version target"): running work first.
var statusOrder = []rollout.TargetStatus{
	rollout.TargetInProgress, rollout.TargetVerifying, rollout.TargetWaitingWindow,
	rollout.TargetFailed, rollout.TargetRolledBack, rollout.TargetPending,
	rollout.TargetSucceeded, rollout.TargetSkipped, rollout.TargetCancelled,
}

// statusTitle is the heading of a group of targets.
var statusTitle = map[rollout.TargetStatus]string{
	rollout.TargetInProgress: "In progress", rollout.TargetVerifying: "Verifying (health wait)",
	rollout.TargetWaitingWindow: "Waiting for a maintenance window", rollout.TargetFailed: "Failed",
	rollout.TargetRolledBack: "Rolled back", rollout.TargetPending: "Pending", rollout.TargetSucceeded: "Succeeded",
	rollout.TargetSkipped: "Skipped", rollout.TargetCancelled: "Cancelled",
}

// countsLine lists the non-zero counts in the page's order:
// "verifying 1 · pending 2 · succeeded 1".
func countsLine(c client.TargetCounts) string {
	var parts []string
	for _, s := range statusOrder {
		if n := c.Of(s); n > 0 {
			parts = append(parts, string(s)+" "+strconv.Itoa(n))
		}
	}
	if len(parts) == 0 {
		return "no targets"
	}
	return strings.Join(parts, " · ")
}
