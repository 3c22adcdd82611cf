package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/revision"
)

// validateCmd checks a revision directory offline with the same checks the
// API applies; the exit status is 1 when an error is found.
func validateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate DIR",
		Short: "Validate a revision directory (fleets/, policies/, executors/, configs/) offline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := revision.ReadDir(args[0])
			if err != nil {
				return err
			}
			rev, issues := revision.Load(files, "")
			if err := printIssues(g, rev, issues); err != nil {
				return err
			}
			if issues.HasErrors() {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

func printIssues(g *globals, rev revision.Revision, issues issue.List) error {
	if g.output == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"valid": !issues.HasErrors(), "issues": nonNil(issues),
			"fleets": len(rev.Fleets), "policies": len(rev.Policies), "executors": len(rev.Executors), "configs": len(rev.Configs)})
	}
	for _, is := range issues {
		fmt.Fprintln(g.stdout, is.String())
	}
	errs := len(issues.Errors())
	fmt.Fprintf(g.stdout, "%d fleets, %d policies, %d executors, %d configurations: %d errors, %d warnings\n",
		len(rev.Fleets), len(rev.Policies), len(rev.Executors), len(rev.Configs), errs, len(issues)-errs)
	return nil
}

func nonNil(l issue.List) issue.List {
	if l == nil {
		return issue.List{}
	}
	return l
}
