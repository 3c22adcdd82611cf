package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/notify"
)

func eventsCmd(g *globals) *cobra.Command {
	var f eventsFlags
	cmd := &cobra.Command{
		Use:   "events",
		Short: "List rollout notifications, oldest first; --follow for new ones as they come",
		Long: `Events lists the notifications rollouts emitted (rollout.started,
rollout.paused, rollout.completed, ...; docs/notifications.md has the
catalogue), as the EventBridge bus carries them: one line per event with its
time, type, rollout, fleet, status, targets and reason. With --rollout it
lists that rollout's events in the order of its versions, otherwise every
event (or --fleet's) by time, from --since (default 24h ago; a duration back
from now or an RFC 3339 time). The API keeps 14 days.

With --follow it then asks again every --interval and prints what is new
until Ctrl-C (exit status 130). Each event is printed once: a follower reads
the last minutes again (the API's margin for changes stored late) and drops
what it printed by eventId. With --output json each event is one JSON object
on one line, the API's shape.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q, err := f.query(g.now())
			if err != nil {
				return err
			}
			if f.interval <= 0 {
				return fmt.Errorf("--interval must be more than 0, not %s", f.interval)
			}
			fw := follower{g: g, c: c, q: q, seen: map[string]time.Time{}}
			return fw.run(cmd.Context(), f.follow, f.interval)
		},
	}
	cmd.Flags().StringVar(&f.rollout, "rollout", "", "only this rollout's events, by version")
	cmd.Flags().StringVar(&f.fleet, "fleet", "", "only this fleet's events")
	cmd.Flags().StringVar(&f.since, "since", "", "start at this time: a duration back from now (90m, 24h) or an RFC 3339 time; default 24h, with --rollout the whole rollout")
	cmd.Flags().BoolVarP(&f.follow, "follow", "f", false, "keep printing new events until Ctrl-C")
	cmd.Flags().DurationVar(&f.interval, "interval", 2*time.Second, "time between two reads with --follow")
	return cmd
}

type eventsFlags struct {
	rollout, fleet, since string
	follow                bool
	interval              time.Duration
}

// defaultSince is how far back events reads without --since and --rollout.
const defaultSince = 24 * time.Hour

func (f eventsFlags) query(now time.Time) (client.EventQuery, error) {
	q := client.EventQuery{Rollout: f.rollout, Fleet: f.fleet, Limit: 500}
	switch {
	case f.since != "":
		if d, err := time.ParseDuration(f.since); err == nil && d >= 0 {
			q.Since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, f.since); err == nil {
			q.Since = t
		} else {
			return q, fmt.Errorf("--since must be a duration such as 24h or an RFC 3339 time, not %q", f.since)
		}
	case f.rollout == "":
		q.Since = now.Add(-defaultSince)
	}
	return q, nil
}

// follower reads the feed page by page and prints each event once.
type follower struct {
	g       *globals
	c       *client.Client
	q       client.EventQuery
	seen    map[string]time.Time // eventId -> the event's time
	printed int
}

// run prints what is there, then, with follow, what comes, until ctx
// ends. A refusal ends it; with follow, a failure to reach the API is
// shown and the next read tries again.
func (f *follower) run(ctx context.Context, follow bool, interval time.Duration) error {
	for read := 0; ; read++ {
		err := f.drain(ctx)
		switch {
		case ctx.Err() != nil:
			return exitError{code: exitInterrupted}
		case err != nil && (!follow || read == 0 || refused(err)):
			return f.g.failed(err)
		case err != nil:
			fmt.Fprintln(f.g.stderr, "myrctl: reading events:", err)
		}
		if !follow {
			if f.printed == 0 && !f.g.json() {
				fmt.Fprintln(f.g.stdout, "no events")
			}
			return nil
		}
		if err := f.g.sleep(ctx, interval); err != nil {
			return exitError{code: exitInterrupted}
		}
	}
}

// drain reads pages until the newest event.
func (f *follower) drain(ctx context.Context) error {
	for {
		l, err := f.c.ListEvents(ctx, f.q)
		if err != nil {
			return err
		}
		for _, e := range l.Items {
			f.print(e)
		}
		f.q.After = l.Next
		if !l.More {
			f.forget()
			return nil
		}
	}
}

func (f *follower) print(e client.RolloutEvent) {
	if _, dup := f.seen[e.EventID]; dup {
		return
	}
	f.seen[e.EventID] = e.Time
	f.printed++
	if f.g.json() {
		b, _ := json.Marshal(e)
		fmt.Fprintln(f.g.stdout, string(b))
		return
	}
	fmt.Fprintln(f.g.stdout, eventLine(e))
}

// forget drops the ids of events too old to be read again: the API's
// margin is notify.Settle back from the newest event.
func (f *follower) forget() {
	var newest time.Time
	for _, t := range f.seen {
		if t.After(newest) {
			newest = t
		}
	}
	for id, t := range f.seen {
		if t.Before(newest.Add(-2 * notify.Settle)) {
			delete(f.seen, id)
		}
	}
}

// eventLine is one event as a line: time, type, rollout (fleet, kind),
// status, the targets, the reason.
//
//	2026-03-02T12:04:10Z  rollout.paused  r-7f3c2a17 (edge, config)  paused  wave canary · 1/6 succeeded, 1 failed  wave 0 "canary" reached ...
func eventLine(e client.RolloutEvent) string {
	r := e.Rollout
	parts := []string{stamp(&e.Time), e.Type, fmt.Sprintf("%s (%s, %s)", r.ID, r.Fleet, r.Kind), string(r.Status), targetsText(r)}
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	return strings.Join(parts, "  ")
}

func targetsText(r notify.Summary) string {
	c := r.Counts
	s := strconv.Itoa(c["succeeded"]) + "/" + strconv.Itoa(c["total"]) + " succeeded"
	for _, st := range []string{"failed", "rolled_back"} {
		if n := c[st]; n > 0 {
			s += ", " + strconv.Itoa(n) + " " + strings.ReplaceAll(st, "_", " ")
		}
	}
	if r.Wave != nil {
		s = "wave " + r.Wave.Name + " · " + s
	}
	if r.Stage != "" {
		s = "stage " + r.Stage + " · " + s
	}
	return s
}
