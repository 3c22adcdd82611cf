package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/revision"
)

// applyCmd sends a revision directory to the API: applied and planned, or
// with --dry-run only validated (exit status 1 when it has an error).
func applyCmd(g *globals) *cobra.Command {
	var commit string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "apply DIR",
		Short: "Apply a revision directory (fleets/, policies/, executors/, configs/) through the API",
		Long: `Apply reads a revision directory and posts it to /api/v1/revisions: the API
validates every object, stores the revision, assigns agents to fleets and plans
the affected fleets. A revision with an error applies nothing.

The commit defaults to 'git rev-parse HEAD' when DIR is in a Git work tree,
else to a hash of the files' contents (content-<12 hex digits>).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			req, how, err := readRevision(cmd.Context(), args[0], commit)
			if err != nil {
				return err
			}
			if dryRun {
				return g.validateRevision(cmd.Context(), c, req, how)
			}
			res, err := c.ApplyRevision(cmd.Context(), req)
			if err != nil {
				return g.failed(err)
			}
			return g.show(res, func() { g.printApplied(res, how) })
		},
	}
	cmd.Flags().StringVar(&commit, "commit", "", "the revision's commit (default: git HEAD of DIR, else a content hash)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only validate through the API (/api/v1/revisions/validate)")
	return cmd
}

// readRevision reads the files of dir and decides the commit; how says
// where the commit came from.
func readRevision(ctx context.Context, dir, commit string) (client.RevisionRequest, string, error) {
	files, err := revision.ReadDir(dir)
	if err != nil {
		return client.RevisionRequest{}, "", err
	}
	req := client.RevisionRequest{Commit: commit, Files: make(map[string]string, len(files))}
	for p, b := range files {
		req.Files[p] = string(b)
	}
	how := "--commit"
	if req.Commit == "" {
		req.Commit, how = defaultCommit(ctx, dir, files)
	}
	return req, how, nil
}

// defaultCommit is HEAD of the Git work tree that holds dir, else a hash of
// the files: the same files give the same commit.
func defaultCommit(ctx context.Context, dir string, files map[string][]byte) (commit, how string) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if head := strings.TrimSpace(string(out)); err == nil && head != "" {
		return head, "git HEAD"
	}
	return contentHash(files), "content hash"
}

// contentHash is "content-" and the first 12 hex digits of the sha256 over
// the sorted paths and their bytes.
func contentHash(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(files[p]))
		h.Write(files[p])
	}
	return "content-" + hex.EncodeToString(h.Sum(nil))[:12]
}

func (g *globals) validateRevision(ctx context.Context, c *client.Client, req client.RevisionRequest, how string) error {
	v, err := c.ValidateRevision(ctx, req)
	if err != nil {
		return g.failed(err)
	}
	if err := g.show(v, func() {
		printIssueList(g, v.Issues)
		verdict := "valid"
		if !v.Valid {
			verdict = "invalid"
		}
		fmt.Fprintf(g.stdout, "revision %s (%s) is %s: fleets %s; policies %s; %s\n", shortRef(v.Commit), how, verdict,
			listOrNone(v.Fleets), listOrNone(v.Policies), issueSummary(v.Issues))
	}); err != nil {
		return err
	}
	if !v.Valid {
		return exitError{code: 1}
	}
	return nil
}

// printApplied shows the applied revision and, per fleet, what planning
// did for each kind.
func (g *globals) printApplied(res client.ApplyResult, how string) {
	printIssueList(g, res.Issues)
	a := res.Agents
	fmt.Fprintf(g.stdout, "applied revision %s (%s) at %s: %d agents, %d assigned, %d moved, %d unassigned\n",
		shortRef(res.Commit), how, stamp(&res.AppliedAt), a.Total, a.Assigned, a.Moved, a.Unassigned)
	if !a.Complete {
		fmt.Fprintln(g.stdout, "  the agents beyond these are assigned by the planner's scheduled run (within a few minutes)")
	}
	for _, c := range a.Conflicts {
		fmt.Fprintf(g.stdout, "  agent %s: %s\n", c.AgentID, c.Error)
	}
	w := table(g.stdout)
	for _, fp := range res.Fleets {
		name := fp.Fleet
		if fp.Removed {
			name += " (removed)"
		}
		for _, p := range fp.Plans {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", name, p.Kind, planLine(p))
		}
	}
	_ = w.Flush()
}

// planLine says what planning did for one fleet and kind.
func planLine(p client.PlanResult) string {
	var parts []string
	switch {
	case p.Created:
		parts = append(parts, "rollout "+p.RolloutID+" created")
	case p.RolloutID != "":
		parts = append(parts, "rollout "+p.RolloutID+" continues")
	}
	if p.Stragglers > 0 {
		parts = append(parts, fmt.Sprintf("%d stragglers added", p.Stragglers))
	}
	note := p.Note
	if p.Bootstrapped > 0 {
		parts = append(parts, bootstrappedText(p.Bootstrapped, p.Created || p.RolloutID != ""))
		if note == planner.NoteNoneRelevant {
			note = "" // the bootstrapped agents are why: said above
		}
	}
	if p.EndedRolloutID != "" {
		parts = append(parts, "rollout "+p.EndedRolloutID+" ended")
	}
	if !p.Planned {
		parts = append(parts, "not planned yet (the scheduled planner run plans it)")
	}
	if p.Error != "" {
		parts = append(parts, "error: "+p.Error)
	}
	if note != "" {
		parts = append(parts, note)
	}
	if len(parts) == 0 {
		return "no rollout"
	}
	return strings.Join(parts, "; ")
}

// bootstrappedText says that n agents got the fleet's configuration
// directly: "20 agents bootstrapped with the fleet's configuration (they
// had none), no rollout needed".
func bootstrappedText(n int, rollout bool) string {
	agents := fmt.Sprintf("%d agents", n)
	if n == 1 {
		agents = "1 agent"
	}
	s := agents + " bootstrapped with the fleet's configuration (they had none)"
	if n == 1 {
		s = agents + " bootstrapped with the fleet's configuration (it had none)"
	}
	if !rollout {
		s += ", no rollout needed"
	}
	return s
}

func printIssueList(g *globals, l issue.List) {
	for _, is := range l {
		fmt.Fprintln(g.stdout, is.String())
	}
}

func issueSummary(l issue.List) string {
	errs := len(l.Errors())
	return fmt.Sprintf("%d errors, %d warnings", errs, len(l)-errs)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
