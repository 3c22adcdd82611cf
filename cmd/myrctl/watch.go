package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/rollout"
)

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

func watchCmd(g *globals) *cobra.Command {
	var interval time.Duration
	var perGroup int
	var until string
	cmd := &cobra.Command{
		Use:   "watch ROLLOUT",
		Short: "Show a rollout's live progress until it ends",
		Long: `Watch reads the rollout and its targets every --interval and shows the waves
with progress bars, the targets grouped by status (running work first) under
their agents' display names (the JSON keeps the ids), the remaining health
wait of each verifying target (verifiedAt plus the policy snapshot's
healthWait, 60 s when it has none, counted with this machine's clock;
"finishing…" when it is over) and the update phase of version targets.
On a terminal the picture is redrawn in place; otherwise frames are appended.
With --output json every refresh prints one JSON object on one line.

Watch ends when the rollout reaches a final status or failed (which waits for
a person): exit status 0 for completed; 1 for failed, aborted, rolled_back
and superseded, or when the API refuses; 130 on Ctrl-C. A paused rollout or
one that waits for approval is watched on, unless --until names its status:
watch then ends there with exit status 0 (--until waiting_approval stops
when a wave waits for your approval).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if interval <= 0 {
				return fmt.Errorf("--interval must be more than 0, not %s", interval)
			}
			if perGroup < 1 {
				return fmt.Errorf("--per-group must be 1 or more, not %d", perGroup)
			}
			stops, err := parseList("--until", until, rolloutStatuses)
			if err != nil {
				return err
			}
			w := watcher{g: g, c: c, id: args[0], interval: interval, perGroup: perGroup, until: stops}
			return w.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "also end, with exit status 0, when the rollout reaches one of these statuses (comma-separated)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between two refreshes")
	cmd.Flags().IntVar(&perGroup, "per-group", 10, "targets shown per status group (the rest is counted)")
	return cmd
}

type watcher struct {
	g        *globals
	c        *client.Client
	id       string
	interval time.Duration
	perGroup int
	until    []rollout.Status // statuses that end the watch as well, with 0
}

// watchRecord is one refresh in --output json: the API's rollout and
// targets, and the health waits counted down with the local clock (empty
// when the engine does not evaluate the rollout).
type watchRecord struct {
	At          time.Time       `json:"at"`
	Rollout     *client.Rollout `json:"rollout"`
	Targets     []client.Target `json:"targets"`
	HealthWaits []healthWait    `json:"healthWaits"`
}

// watchError is a refresh that failed, in --output json.
type watchError struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// run refreshes until the rollout ends or ctx does. The first read must
// succeed and a refusal of the API ends the watch; a later failure to reach
// the API is shown and the next refresh tries again.
func (w watcher) run(ctx context.Context) error {
	for refresh := 0; ; refresh++ {
		r, ts, err := w.read(ctx)
		switch {
		case ctx.Err() != nil:
			return exitError{code: exitInterrupted}
		case err != nil && (refresh == 0 || refused(err)):
			return w.g.failed(err)
		case err != nil:
			w.showError(err)
		default:
			w.show(r, ts)
			if slices.Contains(w.until, r.Status) {
				w.sayEnd(r)
				return nil
			}
			if final, code := ended(r.Status); final {
				w.sayEnd(r)
				return exitOf(code)
			}
		}
		if err := w.g.sleep(ctx, w.interval); err != nil {
			return exitError{code: exitInterrupted}
		}
	}
}

// read is the rollout with its wave counts and every target.
func (w watcher) read(ctx context.Context) (client.Rollout, []client.Target, error) {
	r, err := w.c.GetRollout(ctx, w.id)
	if err != nil {
		return r, nil, err
	}
	ts, err := w.c.AllTargets(ctx, w.id, client.TargetFilter{}, 0)
	return r, ts, err
}

// refused reports whether the API answered with a refusal that another
// try will not change (a 4xx other than throttling).
func refused(err error) bool {
	var p *client.Problem
	return errors.As(err, &p) && p.Status >= 400 && p.Status < 500 && p.Status != http.StatusTooManyRequests
}

// ended says whether watching is over and with which exit status: 0 for
// completed, 1 for the other final statuses and for failed, which has no
// automatic transition.
func ended(s rollout.Status) (bool, int) {
	switch {
	case s == rollout.Completed:
		return true, 0
	case s.Final(), s == rollout.Failed:
		return true, 1
	}
	return false, 0
}

func exitOf(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code: code}
}

func (w watcher) show(r client.Rollout, ts []client.Target) {
	now := w.g.now()
	if w.g.json() {
		waits := healthWaits(r, ts, now)
		rec := watchRecord{At: now.UTC(), Rollout: &r, Targets: ts, HealthWaits: []healthWait{}}
		for _, t := range ts { // in the API's order: wave, then agent
			if h, ok := waits[t.AgentID]; ok {
				rec.HealthWaits = append(rec.HealthWaits, h)
			}
		}
		w.record(rec)
		return
	}
	var b strings.Builder
	if w.g.terminal {
		b.WriteString(clearScreen)
	}
	writeFrame(&b, view{r: r, targets: ts, now: now, perGroup: w.perGroup, operatorToken: w.g.otherOperatorToken()})
	fmt.Fprintf(&b, "updated %s · every %s · Ctrl-C to stop\n\n", stamp(&now), shortDuration(w.interval))
	_, _ = io.WriteString(w.g.stdout, b.String())
}

// writeFrame is the rollout page: header, waves, targets by status.
func writeFrame(b io.Writer, v view) {
	v.writeHeader(b)
	if v.r.Status == rollout.Paused {
		fmt.Fprintf(b, "  paused: myrctl rollouts resume|retry-failed|abort|rollback %s\n", v.r.ID)
	}
	fmt.Fprintln(b)
	v.writeWaves(b)
	if len(v.r.Stages) > 0 {
		fmt.Fprintln(b)
		v.writeStages(b)
	}
	fmt.Fprintln(b)
	v.writeTargets(b)
	fmt.Fprintln(b)
}

func (w watcher) showError(err error) {
	now := w.g.now()
	if w.g.json() {
		w.record(watchError{At: now.UTC(), Error: err.Error()})
		return
	}
	fmt.Fprintf(w.g.stdout, "%s: refresh failed, trying again in %s: %v\n", stamp(&now), shortDuration(w.interval), err)
}

func (w watcher) record(rec any) {
	b, err := json.Marshal(rec)
	if err != nil {
		fmt.Fprintln(w.g.stderr, "myrctl:", err)
		return
	}
	_, _ = w.g.stdout.Write(append(b, '\n'))
}

// sayEnd tells how the rollout ended (text only: the JSON record says it).
func (w watcher) sayEnd(r client.Rollout) {
	if w.g.json() {
		return
	}
	line := fmt.Sprintf("rollout %s %s", r.ID, r.Status)
	if r.StatusReason != "" {
		line += ": " + r.StatusReason
	}
	fmt.Fprintln(w.g.stdout, line)
	if r.Status == rollout.Failed {
		fmt.Fprintf(w.g.stdout, "it waits for a person: myrctl rollouts rollback|abort|retry-failed %s\n", r.ID)
	}
}
